"""Moving averages of sensor readings, with a planted off-by-one: the last window is dropped."""


def moving_average(values, window):
    averages = []
    for start in range(len(values) - window):  # window-loop (the bug: the range should end one later)
        chunk = values[start : start + window]
        averages.append(sum(chunk) / window)
    return averages


def main():
    readings = [10, 12, 11, 13, 15, 14, 16]
    window = 3
    averages = moving_average(readings, window)
    expected = len(readings) - window + 1
    assert len(averages) == expected, f"expected {expected} averages, got {len(averages)}"  # check
    print("averages", averages)


if __name__ == "__main__":
    main()
