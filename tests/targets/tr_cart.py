"""A basket whose total comes out wrong: one line's bulk discount is applied to the whole total, inside a
method that keeps its running total on ``self``. For traces of writes to ``self``."""


class Basket:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def add(self, price, quantity):
        cost = price * quantity
        if quantity >= 10:  # a bulk discount: meant for this line's cost, applied to the whole total
            self.total = self.total * 0.9  # tr-bulk
        self.total += cost  # tr-total
        self.count += quantity
        return cost


def main():
    basket = Basket()
    for price, quantity in [(2.5, 2), (1.25, 4), (4.0, 3), (0.5, 10), (3.0, 1)]:
        basket.add(price, quantity)
    print("basket of", basket.count, "costs", round(basket.total, 2), "expected", 29.5)  # tr-report


if __name__ == "__main__":
    main()
