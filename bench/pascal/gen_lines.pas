{ SPDX-License-Identifier: MIT }
{ gen_lines: writes test data for the "lines" workload (docs/CONTRACTS.md):
  DIR/lines_0.txt .. lines_(N-1).txt, lines of tab-separated fields with LF
  endings, and DIR/expect.txt = "files=N lines=L fields=F bytes=B" where B is
  the sum of the field lengths. A stand-in for the C generator bench/gen_lines.c
  with the same format, so that the Pascal workloads can be tested alone.

  gen_lines --dir DIR [--files N] [--mb MB_PER_FILE] [--seed S] }
program gen_lines;

{$mode objfpc}{$H+}

uses
  SysUtils;

const
  Alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-_';

var
  Dir: string = '';
  Files: Integer = 4;
  MBPerFile: Integer = 16;
  Seed: QWord = 12345;
  RandomState: QWord;

{ xorshift64*: the same data on every run and every machine. }
function NextRandom(Limit: Cardinal): Cardinal;
begin
  RandomState := RandomState xor (RandomState shr 12);
  RandomState := RandomState xor (RandomState shl 25);
  RandomState := RandomState xor (RandomState shr 27);
  Result := ((RandomState * QWord(2685821657736338717)) shr 33) mod Limit;
end;

procedure Usage;
begin
  Writeln(StdErr, 'usage: gen_lines --dir DIR [--files N] [--mb MB_PER_FILE] [--seed S]');
  Halt(1);
end;

var
  I, FileIndex, FieldCount, FieldIndex, FieldLength, K: Integer;
  Buffer: array of Char;
  Fill: Integer;
  F: File;
  TotalLines, TotalFields, TotalBytes, FileBytes, Target: Int64;
  Expect: TextFile;

procedure FlushBuffer;
begin
  BlockWrite(F, Buffer[0], Fill);
  Fill := 0;
end;

begin
  I := 1;
  while I <= ParamCount do
  begin
    if (ParamStr(I) = '--dir') and (I < ParamCount) then Dir := ParamStr(I + 1)
    else if (ParamStr(I) = '--files') and (I < ParamCount) then Files := StrToInt(ParamStr(I + 1))
    else if (ParamStr(I) = '--mb') and (I < ParamCount) then MBPerFile := StrToInt(ParamStr(I + 1))
    else if (ParamStr(I) = '--seed') and (I < ParamCount) then Seed := StrToQWord(ParamStr(I + 1))
    else Usage;
    Inc(I, 2);
  end;
  if (Dir = '') or (Files < 1) or (MBPerFile < 0) then
    Usage;
  ForceDirectories(Dir);
  SetLength(Buffer, 1 shl 20);
  TotalLines := 0; TotalFields := 0; TotalBytes := 0;
  Target := Int64(MBPerFile) * 1024 * 1024;
  if Target = 0 then
    Target := 64 * 1024;   { --mb 0: a tiny data set for tests }
  for FileIndex := 0 to Files - 1 do
  begin
    RandomState := Seed * 1000003 + QWord(FileIndex) * 7919 + 1;
    AssignFile(F, IncludeTrailingPathDelimiter(Dir) + 'lines_' + IntToStr(FileIndex) + '.txt');
    Rewrite(F, 1);
    Fill := 0;
    FileBytes := 0;
    while FileBytes < Target do
    begin
      if Fill > Length(Buffer) - 4096 then
        FlushBuffer;
      FieldCount := 3 + NextRandom(12);
      for FieldIndex := 1 to FieldCount do
      begin
        FieldLength := 1 + NextRandom(24);
        for K := 1 to FieldLength do
        begin
          Buffer[Fill] := Alphabet[1 + NextRandom(Length(Alphabet))];
          Inc(Fill);
        end;
        Inc(TotalBytes, FieldLength);
        Inc(FileBytes, FieldLength + 1);
        if FieldIndex < FieldCount then Buffer[Fill] := #9 else Buffer[Fill] := #10;
        Inc(Fill);
      end;
      Inc(TotalFields, FieldCount);
      Inc(TotalLines);
    end;
    FlushBuffer;
    CloseFile(F);
  end;
  AssignFile(Expect, IncludeTrailingPathDelimiter(Dir) + 'expect.txt');
  Rewrite(Expect);
  Writeln(Expect, 'files=', Files, ' lines=', TotalLines, ' fields=', TotalFields, ' bytes=', TotalBytes);
  CloseFile(Expect);
  Writeln('files=', Files, ' lines=', TotalLines, ' fields=', TotalFields, ' bytes=', TotalBytes);
end.
