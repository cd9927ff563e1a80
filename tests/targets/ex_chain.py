"""A chained raise: ConfigError 'from' a ValueError, raised while a KeyError was being handled."""


class ConfigError(Exception):
    pass


def load(path):
    data = {"path": path, "size": 3}
    try:
        return int(data["path"])  # value-error
    except ValueError as exc:
        raise ConfigError(f"bad config {path}") from exc  # config-error


def read_settings():
    try:
        {}["missing"]  # key-error
    except KeyError:
        load("abc")  # during-handling


read_settings()
