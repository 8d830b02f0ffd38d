#!/usr/bin/python3
"""Training-input side of the demo: read TFRecords through the Python
bindings, parse each tf.Example, decode its JPEG with PIL and check the
stored height/width/label against the pixels and the label range.

  scripts/demo_read.py FILE [FILE...]

Prints one summary line per file; exits 1 on the first inconsistency.
"""
import io
import sys

from PIL import Image

import tfrec


def check_file(path):
    n = 0
    labels = set()
    for record in tfrec.TFRecordReader(path):
        ex = tfrec.Example.parse(record).to_dict()
        image = Image.open(io.BytesIO(ex["image/encoded"][0]))
        image.load()  # full decode: a truncated JPEG fails here
        want = (ex["image/width"][0], ex["image/height"][0])
        if image.size != want:
            raise SystemExit("%s record %d: pixels %s, features say %s" % (path, n, image.size, want))
        if image.mode not in ("RGB", "L"):
            raise SystemExit("%s record %d: image mode %s, expected RGB" % (path, n, image.mode))
        if ex["image/format"] != [b"JPEG"] or ex["image/colorspace"] != [b"RGB"]:
            raise SystemExit("%s record %d: wrong format/colorspace features" % (path, n))
        labels.add(ex["image/class/label"][0])
        n += 1
    print("  %s: %d examples decoded, labels %s" % (path, n, sorted(labels)))
    return n


def main(paths):
    total = sum(check_file(p) for p in paths)
    print("== decoded %d examples with PIL; sizes and features agree" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
