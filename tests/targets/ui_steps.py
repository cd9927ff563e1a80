"""A few lines to step through, printing on the way, with a secret in a local: for the live view."""


def handle(order_id: int) -> int:
    api_token = "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234"
    config = {"retries": 3, "hosts": ["db-1", "db-2"]}
    total = order_id * 2  # ui-start
    total += config["retries"]  # ui-next
    print(f"order {order_id} handled, total {total}", flush=True)  # ui-print
    total += len(api_token) * 0  # ui-after
    return total


if __name__ == "__main__":
    print("result", handle(21))
