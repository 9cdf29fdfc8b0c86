#!/usr/bin/python3
# An image from a file into numpy, resized and blurred on the default
# device (a GPU where there is one, else cpu:0), and written back.
#
#   meson devenv -C build /usr/bin/python3 ../introspection/examples/image.py IN.png OUT.png [WIDTH HEIGHT]
#
# PNG, JPEG and the rest go through GdkPixbuf where its typelib is
# installed (gir1.2-gdkpixbuf-2.0); binary PPM (P6) always works. With no
# arguments it makes a test picture, writes it to a temporary file, and
# goes on from there.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import sys
import tempfile

import gi
gi.require_version("Accel", "1.0")
from gi.repository import Accel, GLib
import numpy as np

try:
    gi.require_version("GdkPixbuf", "2.0")
    from gi.repository import GdkPixbuf
except (ValueError, ImportError):
    GdkPixbuf = None


def load(path):
    """The image at path as an RGB (h, w, 3) uint8 array."""
    if path.endswith(".ppm"):
        with open(path, "rb") as f:
            data = f.read()
        fields, pos = [], 0
        while len(fields) < 4:
            while data[pos:pos + 1].isspace():
                pos += 1
            if data[pos:pos + 1] == b"#":
                pos = data.index(b"\n", pos)
                continue
            end = pos
            while not data[end:end + 1].isspace():
                end += 1
            fields.append(data[pos:end])
            pos = end
        if fields[0] != b"P6" or int(fields[3]) != 255:
            raise ValueError(f"{path}: not an 8-bit binary PPM")
        w, h = int(fields[1]), int(fields[2])
        return np.frombuffer(data, np.uint8, w * h * 3, pos + 1).reshape(h, w, 3).copy()
    pixbuf = GdkPixbuf.Pixbuf.new_from_file(path)
    if pixbuf.get_has_alpha():
        pixbuf = pixbuf.add_alpha(False, 0, 0, 0).composite_color_simple(
            pixbuf.get_width(), pixbuf.get_height(), GdkPixbuf.InterpType.NEAREST, 255, 8, 0, 0)
    h, w, stride = pixbuf.get_height(), pixbuf.get_width(), pixbuf.get_rowstride()
    rows = np.frombuffer(pixbuf.get_pixels(), np.uint8)
    return np.stack([rows[y * stride:y * stride + w * pixbuf.get_n_channels()] for y in range(h)]) \
             .reshape(h, w, pixbuf.get_n_channels())[:, :, :3].copy()


def save(path, rgb):
    if path.endswith(".ppm") or GdkPixbuf is None:
        with open(path, "wb") as f:
            f.write(b"P6\n%d %d\n255\n" % (rgb.shape[1], rgb.shape[0]) + rgb.tobytes())
        return
    h, w, _ = rgb.shape
    pixbuf = GdkPixbuf.Pixbuf.new_from_bytes(GLib.Bytes.new(rgb.tobytes()), GdkPixbuf.Colorspace.RGB,
                                             False, 8, w, h, w * 3)
    pixbuf.savev(path, os.path.splitext(path)[1][1:].replace("jpg", "jpeg"), [], [])


def to_device(dev, array):
    buf = dev.alloc(Accel.DType.U8, Accel.Shape.new(list(array.shape)))
    buf.upload(GLib.Bytes.new(array.tobytes()))
    return buf


def resize_and_blur(dev, rgb, width, height, sigma=1.5):
    h, w, _ = rgb.shape
    src = to_device(dev, rgb)
    small = dev.alloc(Accel.DType.U8, Accel.Shape.new([height, width, 3]))
    out = dev.alloc(Accel.DType.U8, Accel.Shape.new([height, width, 3]))
    # Ops by name; their parameters are properties (images: format, size, strides).
    resize = Accel.Op.new_by_name("resize")
    resize.set_property("method", Accel.Interpolation.AREA)
    for side, buf, (iw, ih) in (("src", src, (w, h)), ("dst", small, (width, height))):
        resize.set_property(side, buf)
        resize.set_property(side + "-format", Accel.ImageFormat.RGB)
        resize.set_property(side + "-width", iw)
        resize.set_property(side + "-height", ih)
    dev.submit(resize, None)
    blur = Accel.Filter(kind=Accel.FilterKind.GAUSSIAN, sigma=sigma, border=Accel.BorderMode.REFLECT_101)
    blur.set_property("src", small)
    blur.set_property("src-format", Accel.ImageFormat.RGB)
    blur.set_property("src-width", width)
    blur.set_property("src-height", height)
    blur.set_property("dst", out)
    dev.submit(blur, None)
    return np.frombuffer(out.download().get_data(), np.uint8).reshape(height, width, 3)


def main(argv):
    system = Accel.System.new()
    dev = system.get_device("default")
    print("device:", dev.get_name())
    if len(argv) >= 3:
        src_path, dst_path = argv[1], argv[2]
        size = (int(argv[3]), int(argv[4])) if len(argv) >= 5 else None
    else:
        tmp = tempfile.mkdtemp()
        suffix = ".png" if GdkPixbuf else ".ppm"
        src_path, dst_path = os.path.join(tmp, "in" + suffix), os.path.join(tmp, "out" + suffix)
        # A smooth picture with a little noise: 333x201, odd on purpose.
        y, x = np.mgrid[0:201, 0:333]
        picture = np.stack([x * 255 // 332, y * 255 // 200, (x + y) * 255 // 532], -1)
        picture = np.clip(picture + np.random.randint(-8, 9, picture.shape), 0, 255).astype(np.uint8)
        save(src_path, picture)
        size = None

    rgb = load(src_path)
    h, w, _ = rgb.shape
    width, height = size or (max(1, w // 3), max(1, h // 3))
    out = resize_and_blur(dev, rgb, width, height)
    save(dst_path, out)
    print(f"{src_path} {w}x{h} -> resized to {width}x{height}, Gaussian sigma 1.5 -> {dst_path}")

    # Area resizing and a normalised blur keep the picture's mean colour.
    mean_in, mean_out = rgb.reshape(-1, 3).mean(0), out.reshape(-1, 3).mean(0)
    print("mean colour in", np.round(mean_in, 1), "out", np.round(mean_out, 1))
    assert np.all(np.abs(mean_in - mean_out) < 3.0), "the mean colour moved"
    assert load(dst_path).shape == (height, width, 3)

    # A bad op is refused before it runs, naming the property.
    bad = Accel.Op.new_by_name("resize")
    bad.set_property("src", to_device(dev, rgb))
    bad.set_property("src-format", Accel.ImageFormat.RGB)
    bad.set_property("src-width", w + 1)
    bad.set_property("src-height", h)
    bad.set_property("dst", to_device(dev, out))
    bad.set_property("dst-format", Accel.ImageFormat.RGB)
    bad.set_property("dst-width", width)
    bad.set_property("dst-height", height)
    try:
        dev.submit(bad, None)
        raise AssertionError("a source larger than its buffer was accepted")
    except GLib.Error as e:
        assert e.matches(Accel.error_quark(), Accel.Error.SHAPE_MISMATCH), e.message
        print("refused as expected:", e.message)


if __name__ == "__main__":
    main(sys.argv)
