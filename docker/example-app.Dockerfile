# debugrelay/example-app: a toy long-running app under debugpy, for trying an attach:
#   docker run -d --name shop -p 127.0.0.1:5678:5678 debugrelay/example-app:latest
# It does not wait for a client; set a breakpoint in process_order() (/app/app.py) once attached.
ARG TARGET=debugrelay/target:latest
FROM ${TARGET}
COPY example_app/ /app/
EXPOSE 5678
# -Xfrozen_modules=off: without it debugpy warns (on stderr) that breakpoints in frozen stdlib
# modules may be missed
CMD ["python", "-Xfrozen_modules=off", "-m", "debugpy", "--listen", "0.0.0.0:5678", "/app/app.py"]
