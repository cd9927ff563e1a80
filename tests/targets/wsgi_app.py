"""A WSGI application for a server with pre-forked workers (gunicorn): each request answered in a worker."""


def app(environ, start_response):
    path = environ["PATH_INFO"]
    body = f"hello {path}".encode()  # handler-line
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [body]
