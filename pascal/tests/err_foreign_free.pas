{ SPDX-License-Identifier: MIT }
{ Helper for test_errors: FreeMem of memory brisk did not allocate, in a
  program without SysUtils: a message and runtime error 204, not a crash. }
program err_foreign_free;

uses
  BriskMM;

var
  Buffer: array[0..63] of Byte;

begin
  FreeMem(@Buffer[16]);
  Writeln('FreeMem returned');
end.
