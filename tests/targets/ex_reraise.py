"""A new exception raised inside an except block (implicit chaining), and a bare re-raise."""
# ruff: noqa: B904, TRY203 - implicit chaining and a bare re-raise are the point


def price(order):
    return order["total"] / order["qty"]  # divide


def checkout(order):
    attempts = 0
    try:
        return price(order)
    except ZeroDivisionError:
        attempts += 1
        raise RuntimeError(f"cannot price order {order['id']}")  # raise-in-except


def retry(order):
    try:
        return checkout(order)
    except RuntimeError:
        raise  # bare-reraise


retry({"id": 7, "total": 10, "qty": 0})
