{ SPDX-License-Identifier: MIT }
{ percall: the cost of one GetMem/FreeMem pair through the installed memory
  manager, for comparing the managers' per-call overhead. One thread, one
  block size, nothing else: what is left is the manager's own work plus the
  RTL's dispatch through the TMemoryManager record. Built once per memory
  manager, like lines and objects.

  percall [--iterations N] [--size BYTES]

  Timings on a shared machine are noisy; for a stable figure count
  instructions with callgrind and take the difference of two runs, which
  removes start-up and exit:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null percall --iterations 10000000
    valgrind --tool=callgrind --callgrind-out-file=/dev/null percall --iterations 0

  (bench/pascal/percall.py does this for all three managers.)
  The last line on stdout is "RESULT ok=1 ops=<pairs> ... ns_per_pair=..". }
program PerCall;

{$mode objfpc}{$H+}

uses
{$I memory_manager.inc}
  SysUtils;

procedure Fail(const Reason: string);
begin
  Writeln(StdErr, 'percall: ', Reason);
  Writeln('RESULT ok=0 ops=0');
  Halt(2);
end;

{ A separate function (fpc -O2 does not inline it), so that the loop is the same code for
  every manager and the compiler cannot drop the pairs. Writing into the
  block keeps it a real use; the checksum proves the loop ran. }
function Pairs(Iterations: PtrInt; Size: PtrUInt): PtrUInt; { PtrInt: a loop counter on i386 too }
var
  I: PtrInt;
  P: PByte;
begin
  Result := 0;
  for I := 1 to Iterations do
  begin
    GetMem(P, Size);
    P^ := Byte(I);
    Inc(Result, P^);
    FreeMem(P);
  end;
end;

var
  Iterations: Int64 = 10000000;
  Size: PtrUInt = 32;
  I: Integer;
  Started, Millis: QWord;
  Sum: PtrUInt;
  NsPerPair: Double;

begin
  I := 1;
  while I <= ParamCount do
  begin
    if (ParamStr(I) = '--iterations') and (I < ParamCount) then
      Iterations := StrToInt64Def(ParamStr(I + 1), -1)
    else if (ParamStr(I) = '--size') and (I < ParamCount) then
      Size := StrToQWordDef(ParamStr(I + 1), 0)
    else
      Fail('usage: percall [--iterations N] [--size BYTES]');
    Inc(I, 2);
  end;
  if (Iterations < 0) or (Size = 0) then
    Fail('--iterations must be at least 0 and --size at least 1');
  Started := GetTickCount64;
  Sum := Pairs(Iterations, Size);
  Millis := GetTickCount64 - Started;
  { Byte(I) summed over 1..N: each full run of 256 adds 0+1+..+255. }
  if Sum <> PtrUInt((Iterations div 256) * 32640 + ((Iterations mod 256) * (Iterations mod 256 + 1)) div 2) then
    Fail('checksum mismatch');
  if Iterations > 0 then
    NsPerPair := Millis * 1e6 / Iterations
  else
    NsPerPair := 0;
  Writeln(Format('RESULT ok=1 ops=%d size=%d ms=%d ns_per_pair=%.1f',
    [Iterations, Size, Millis, NsPerPair]));
end.
