#!/usr/bin/env python3
"""What scripts/bench-desktop.sh needs from the X server, through libX11 itself (ctypes).

  wait-pixel X Y RRGGBB [--gone] [--timeout S]
      Returns once the screen's pixel at X,Y has (or, with --gone, no longer has) that colour.
      One 1x1 XGetImage per 5 ms in this one process: ImageMagick's `import` per poll started a
      process and copied the whole screen each time, took ~30 ms of CPU per poll and measured
      in ~75 ms steps, on the same two cores the app starts on.
  close WINDOW
      Closes a window the way a window manager does (WM_DELETE_WINDOW; Xvfb runs none).
"""
import ctypes
import sys
import time

x = ctypes.CDLL("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XDefaultRootWindow.restype = ctypes.c_ulong
x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x.XGetImage.restype = ctypes.c_void_p
x.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                        ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
x.XGetPixel.restype = ctypes.c_ulong
x.XGetPixel.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
x.XDestroyImage.argtypes = [ctypes.c_void_p]
x.XInternAtom.restype = ctypes.c_ulong
x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long,
                         ctypes.c_void_p]
x.XFlush.argtypes = [ctypes.c_void_p]

ALL_PLANES = 0xFFFFFFFF
Z_PIXMAP = 2


def open_display():
    display = x.XOpenDisplay(None)
    if not display:
        sys.exit("x11-probe: cannot open the display")
    return display


def pixel(display, root, px, py):
    image = x.XGetImage(display, root, px, py, 1, 1, ALL_PLANES, Z_PIXMAP)
    if not image:
        return None
    value = x.XGetPixel(image, 0, 0) & 0xFFFFFF
    x.XDestroyImage(image)
    return value


def wait_pixel(args):
    px, py, colour = int(args[0]), int(args[1]), int(args[2], 16)
    gone = "--gone" in args
    timeout = float(args[args.index("--timeout") + 1]) if "--timeout" in args else 60.0
    display = open_display()
    root = x.XDefaultRootWindow(display)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (pixel(display, root, px, py) == colour) != gone:
            return
        time.sleep(0.005)
    sys.exit(f"x11-probe: pixel {px},{py} {'still' if gone else 'never'} #{args[2]} after {timeout} s")


class ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", ctypes.c_ulong),
                ("message_type", ctypes.c_ulong), ("format", ctypes.c_int),
                ("data", ctypes.c_long * 5), ("pad", ctypes.c_long * 12)]


def close(args):
    display = open_display()
    window = int(args[0])
    client_message = 33
    event = ClientMessage(type=client_message, window=window,
                          message_type=x.XInternAtom(display, b"WM_PROTOCOLS", 0), format=32)
    event.data[0] = x.XInternAtom(display, b"WM_DELETE_WINDOW", 0)
    x.XSendEvent(display, window, 0, 0, ctypes.byref(event))
    x.XFlush(display)


if __name__ == "__main__":
    commands = {"wait-pixel": wait_pixel, "close": close}
    if len(sys.argv) < 3 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](sys.argv[2:])
