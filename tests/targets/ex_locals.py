"""A throwing frame with awkward locals: a failing __repr__, huge containers, a long string, many names."""
# ruff: noqa: RUF059 - the locals exist to be many


class Exploding:
    def __init__(self):
        self.kind = "exploding"

    def __repr__(self):
        raise RuntimeError("repr exploded")


class Account:
    def __init__(self, owner, balance):
        self.owner = owner
        self.balance = balance
        self.history = list(range(40))


def settle(account, amount):
    bad = Exploding()
    big = list(range(100_000))
    text = "y" * 10_000
    table = {f"k{i}": i for i in range(500)}
    filler = [f"v{i}" for i in range(3)]
    v00, v01, v02, v03, v04, v05, v06, v07, v08, v09 = range(10)
    v10, v11, v12, v13, v14, v15, v16, v17, v18, v19 = range(10)
    v20, v21, v22, v23, v24, v25, v26, v27, v28, v29 = range(10)
    v30, v31, v32, v33, v34, v35, v36, v37, v38, v39 = range(10)
    v40, v41, v42, v43, v44, v45, v46, v47, v48, v49 = range(10)
    if account.balance < amount:
        raise ValueError(f"insufficient funds: {account.balance} < {amount}")  # settle-raise
    return bad, big, text, table, filler


settle(Account("ada", 5), 20)
