"""A program holding secrets, as a service under debugging would."""

import os


def connect(url: str, password: str, api_token: str) -> str:
    card = "4111 1111 1111 1111"
    owner = "ada.lovelace@example.org"
    request_id = "550e8400-e29b-41d4-a716-446655440000"
    print(f"connecting as {owner} with token={api_token}", flush=True)
    copy = ""
    return f"{url} {card} {request_id} {copy} {password}"  # secrets-stop


if __name__ == "__main__":
    secret_of_env = os.environ.get("SERVICE_PASSWORD", "hunter2-horse-battery")
    connect(
        "postgresql://svc:Tr0ub4dor3x@db.internal:5432/app", secret_of_env, "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234"
    )
