"""A call written over several lines, run three times: one execution is one stop."""


def compute(a, b):
    return a + b


for i in range(3):
    total = compute(  # multi-line-call
        i,
        10,
    )
print("total", total)
