"""Objects for inspection: a service with a repository and a connection, a cycle, numbers."""


class Connection:
    def __init__(self, dsn):
        self.dsn = dsn
        self.open = True
        self.retries = [1, 2, 3]


class Repository:
    def __init__(self, conn):
        self._conn = conn
        self.cache = {"users": ["ada", "bob"], "hits": 2}


class Node:
    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.children = []


class Service:
    def __init__(self):
        self.repo = Repository(Connection("db://local/main"))
        self.level = {"a": {"b": {"c": {"d": {"e": [1, 2]}}}}}

    def lookup(self, user_id, *extra, verbose=False, **options):
        root = Node("root")
        child = Node("child", root)
        root.children.append(child)
        root.me = root
        mask = 255
        found = None
        return root, child, mask, found  # lookup-here


CONFIG_NAME = "insp"
Service().lookup(42, "x", verbose=True, limit=3)
