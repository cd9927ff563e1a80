"""A sensor's 300 readings calibrated in one loop: the 173rd is read in millivolts, not volts, and the average
comes out far too high. For traces of a loop whose one iteration differs."""


def calibrate(readings):
    total = 0.0
    for reading in readings:
        volts = reading * 1.5  # tr-volts
        total += volts
    return total / len(readings)


def main():
    readings = [1.0 + (i % 10) / 100 for i in range(300)]
    readings[172] = 1040.0  # in millivolts
    print("average", round(calibrate(readings), 3), "expected about", 1.568)


if __name__ == "__main__":
    main()
