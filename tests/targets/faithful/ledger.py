"""A small bookkeeping program with what a debugger must leave alone: objects of its own types whose
``__repr__`` counts its calls (and one that takes the ledger's lock, held while entries are written),
generators, a generator expression. It prints its results, then on stderr how often its ``__repr__`` ran,
and exits with 3."""

import sys
import threading


class Account:
    reprs = 0

    def __init__(self, name, balance):
        self.name = name
        self.balance = balance

    def __repr__(self):
        Account.reprs += 1
        return f"Account({self.name!r}, {self.balance})"


class Ledger:
    def __init__(self):
        self.lock = threading.Lock()
        self.entries = []

    def __repr__(self):
        with self.lock:  # run while the program holds the lock, it would never return
            return f"Ledger({len(self.entries)} entries)"


def transactions(accounts, rounds):
    """Each round moves an amount from one account to the next."""
    for n in range(rounds):
        yield accounts[n % len(accounts)], accounts[(n + 1) % len(accounts)], (n * 7) % 23 + 1


def fee(amount, rate):
    charged = amount * rate // 100 + 1  # fee-here
    return charged


def apply(ledger, src, dst, amount):
    with ledger.lock:
        charged = fee(amount, 2)
        src.balance -= amount + charged
        dst.balance += amount  # apply-here
        ledger.entries.append((src.name, dst.name, amount, charged))  # append-here
    return charged


def main():
    accounts = [Account(name, 1000) for name in ("ann", "bob", "cy")]
    ledger = Ledger()
    fees = sum(apply(ledger, src, dst, amount) for src, dst, amount in transactions(accounts, 300))
    print("fees", fees)
    for account in accounts:
        print(account.name, account.balance)
    print("entries", len(ledger.entries), "last", ledger.entries[-1])
    print("reprs", Account.reprs, file=sys.stderr)
    return 3


sys.exit(main())
