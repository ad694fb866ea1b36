/* SPDX-License-Identifier: MIT */
/* CPython's interpreter as a program of this build's width: the whole of
 * python3's own main, linked against Debian's libpython3.11 of that
 * architecture. A 32-bit build needs it because Debian's 32-bit python3
 * (python3.11:i386) cannot be installed beside the 64-bit one, while its
 * library (libpython3.11:i386, Multi-Arch: same) can; the interpreter, its
 * standard library and extension modules are Debian's, only this file is not.
 * Declared here rather than taken from Python.h, which would need the -dev
 * package of that architecture. */
int Py_BytesMain(int argc, char **argv);

int main(int argc, char **argv) {
  return Py_BytesMain(argc, argv);
}
