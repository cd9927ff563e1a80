"""A Flask app (the framework from PyPI) served by Werkzeug's threaded server: GET /orders/<id>?coupon=X
answers the order's total; the port is the first argument."""

import sys

from flask import Flask, jsonify, request

app = Flask(__name__)
PRICES = {"apple": 3, "pear": 5}


@app.get("/orders/<int:order_id>")
def order(order_id):
    coupon = request.args.get("coupon", "")
    items = ["apple"] * order_id + ["pear"]  # handler-line
    total = sum(PRICES[item] for item in items) - (2 if coupon == "SAVE2" else 0)
    return jsonify(order=order_id, total=total, coupon=coupon)


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(sys.argv[1]), threaded=True, use_reloader=False)
