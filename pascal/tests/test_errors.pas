{ SPDX-License-Identifier: MIT }
{ Runs the helper programs and checks how BriskMM reports mistakes: a clear
  message on stderr and a non-zero exit code, never a crash. Also checks that
  the statically linked program needs no brisk shared library (libbrisk.so,
  brisk.dll) and the BRISK_SHARED one does. Prints "N passed, M failed".

  test_errors HELPER_DIR }
program test_errors;

{$mode objfpc}{$H+}

uses
{$IFDEF UNIX}
  BriskMM, cthreads, Classes, SysUtils, BaseUnix, Unix;
{$ELSE}
  BriskMM, Windows, Classes, SysUtils;
{$ENDIF}

{$I checks.inc}

const
{$IFDEF MSWINDOWS}
  HelperSuffix = '.exe';
  SharedLibrary = 'brisk.dll';
{$ELSE}
  HelperSuffix = '';
  SharedLibrary = 'libbrisk.so';
{$ENDIF}

var
  HelperDir, TempDir: string;

function ReadText(const FileName: string): string;
var
  Lines: TStringList;
begin
  Lines := TStringList.Create;
  try
    Lines.LoadFromFile(FileName);
    Result := Lines.Text;
  finally
    Lines.Free;
  end;
end;

{$IFDEF UNIX}
{ Runs a helper, returns its exit code (-1 when killed by a signal) and what
  it wrote on stdout and stderr. }
function RunHelper(const Command: string; out StdOut, StdErrText: string): Integer;
var
  Status: cint;
begin
  Status := fpSystem(Command + ' >' + TempDir + '/out.txt 2>' + TempDir + '/err.txt');
  if WIFEXITED(Status) then
    Result := WEXITSTATUS(Status)
  else
    Result := -1;
  StdOut := ReadText(TempDir + '/out.txt');
  StdErrText := ReadText(TempDir + '/err.txt');
end;

{ Whether the program loads Library_ (ldd lists it). }
function Needs(const Helper, Library_: string): Boolean;
var
  StdOut, StdErrText: string;
begin
  RunHelper('ldd ' + HelperDir + '/' + Helper, StdOut, StdErrText);
  Result := Pos(Library_, StdOut) > 0;
end;
{$ELSE}
{ Runs a helper, returns its exit code (-1 when it cannot be started) and
  what it wrote on stdout and stderr. }
function RunHelper(const Command: string; out StdOut, StdErrText: string): Integer;
var
  Security: TSecurityAttributes;
  OutFile, ErrFile: THandle;
  Startup: TStartupInfo;
  Process: TProcessInformation;
  Code: DWORD;
  CommandLine: string;
begin
  Security.nLength := SizeOf(Security);
  Security.lpSecurityDescriptor := nil;
  Security.bInheritHandle := True;
  OutFile := CreateFile(PChar(TempDir + '\out.txt'), GENERIC_WRITE, FILE_SHARE_READ, @Security,
    CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, 0);
  ErrFile := CreateFile(PChar(TempDir + '\err.txt'), GENERIC_WRITE, FILE_SHARE_READ, @Security,
    CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, 0);
  FillChar(Startup, SizeOf(Startup), 0);
  Startup.cb := SizeOf(Startup);
  Startup.dwFlags := STARTF_USESTDHANDLES;
  Startup.hStdInput := GetStdHandle(STD_INPUT_HANDLE);
  Startup.hStdOutput := OutFile;
  Startup.hStdError := ErrFile;
  CommandLine := '"' + Command + '"';
  UniqueString(CommandLine);   { CreateProcess may write into the command line }
  if CreateProcess(nil, PChar(CommandLine), nil, nil, True, 0, nil, nil, Startup, Process) then
  begin
    WaitForSingleObject(Process.hProcess, INFINITE);
    GetExitCodeProcess(Process.hProcess, Code);
    Result := Integer(Code);
    CloseHandle(Process.hThread);
    CloseHandle(Process.hProcess);
  end
  else
    Result := -1;
  CloseHandle(OutFile);
  CloseHandle(ErrFile);
  StdOut := ReadText(TempDir + '\out.txt');
  StdErrText := ReadText(TempDir + '\err.txt');
end;

{ Whether the program imports Library_: the names in its PE import
  directory, what ldd tells on Linux. }
function Needs(const Helper, Library_: string): Boolean;
var
  Image: TMemoryStream;

  { A little-endian field of Bytes (2 or 4) bytes; 0 outside the file. }
  function ReadField(Offset: PtrUInt; Bytes: Integer): LongWord;
  begin
    if Offset + PtrUInt(Bytes) > PtrUInt(Image.Size) then
      Exit(0);
    if Bytes = 2 then
      Result := PWord(PByte(Image.Memory) + Offset)^
    else
      Result := PLongWord(PByte(Image.Memory) + Offset)^;
  end;

  function Read32(Offset: PtrUInt): LongWord;
  begin
    Result := ReadField(Offset, 4);
  end;

var
  Header, Sections, Descriptor: PtrUInt;
  SectionCount: Integer;

  { The file offset of a relative virtual address, through the section table. }
  function FileOffset(Rva: LongWord): PtrUInt;
  var
    I: Integer;
    Section: PtrUInt;
  begin
    for I := 0 to SectionCount - 1 do
    begin
      Section := Sections + PtrUInt(I) * 40;
      if (Rva >= Read32(Section + 12)) and (Rva < Read32(Section + 12) + Read32(Section + 16)) then
        Exit(Rva - Read32(Section + 12) + Read32(Section + 20));
    end;
    Result := High(PtrUInt) div 2;   { outside the file: reads give 0 }
  end;

  function NameAt(Offset: PtrUInt): string;
  begin
    Result := '';
    while (Offset < PtrUInt(Image.Size)) and (PByte(Image.Memory)[Offset] <> 0) do
    begin
      Result := Result + Chr(PByte(Image.Memory)[Offset]);
      Inc(Offset);
    end;
  end;

begin
  Result := False;
  Image := TMemoryStream.Create;
  try
    Image.LoadFromFile(HelperDir + '\' + Helper + HelperSuffix);
    Header := Read32($3C);                     { e_lfanew: "PE\0\0" and the COFF header }
    if Read32(Header) <> $00004550 then
      Exit;
    SectionCount := ReadField(Header + 6, 2);
    Sections := Header + 24 + ReadField(Header + 20, 2);
    { Data directory 1 (imports): at offset 120 of a PE32+ optional header
      (magic $20B, 64-bit), at 104 of a PE32 one (32-bit) }
    if ReadField(Header + 24, 2) = $20B then
      Descriptor := FileOffset(Read32(Header + 24 + 120))
    else
      Descriptor := FileOffset(Read32(Header + 24 + 104));
    while Read32(Descriptor + 12) <> 0 do      { Name of each IMAGE_IMPORT_DESCRIPTOR }
    begin
      if CompareText(NameAt(FileOffset(Read32(Descriptor + 12))), Library_) = 0 then
        Exit(True);
      Inc(Descriptor, 20);
    end;
  finally
    Image.Free;
  end;
end;
{$ENDIF}

procedure Expect(const Helper: string; ExitCode: Integer; const Message: string);
var
  Code: Integer;
  StdOut, StdErrText: string;
begin
  Code := RunHelper(HelperDir + PathDelim + Helper + HelperSuffix, StdOut, StdErrText);
  Check(Code = ExitCode, Format('%s exits with %d (got %d)', [Helper, ExitCode, Code]));
  if Message = '' then
    Check(StdErrText = '', Helper + ' writes nothing on stderr, got: ' + StdErrText)
  else
    Check(Pos(Message, StdErrText) > 0, Helper + ' says "' + Message + '" on stderr, got: ' + StdErrText);
  if ExitCode <> 0 then
    Check(Pos('main ran', StdOut) = 0, Helper + ' stops before its main program');
end;

begin
  if ParamCount <> 1 then
  begin
    Writeln(StdErr, 'usage: test_errors HELPER_DIR');
    Halt(2);
  end;
  HelperDir := ExcludeTrailingPathDelimiter(ParamStr(1));
  TempDir := GetTempDir(False) + 'brisk_test_errors_' + IntToStr(GetProcessID);
  ForceDirectories(TempDir);

  Expect('ok_minimal', 0, '');
  Expect('ok_minimal_shared', 0, '');
  Expect('err_not_first', BriskExitNotFirst, 'must be the first unit');
  Expect('err_not_first', BriskExitNotFirst, 'have already allocated memory from the default heap');
{$IFDEF UNIX}
  { cthreads exists on Unix only; Windows programs need no thread unit }
  Expect('err_after_cthreads', BriskExitNotFirst, 'must be the first unit');
{$ENDIF}
  Expect('ok_minimal_heaptrc', BriskExitNotFirst, 'another memory manager');
  Expect('err_foreign_free', 204, 'which brisk did not allocate');

  Check(not Needs('ok_minimal', SharedLibrary), 'the static build needs no ' + SharedLibrary);
  Check(Needs('ok_minimal_shared', SharedLibrary), 'the BRISK_SHARED build links ' + SharedLibrary);

  DeleteFile(TempDir + PathDelim + 'out.txt');
  DeleteFile(TempDir + PathDelim + 'err.txt');
  RemoveDir(TempDir);
  FinishChecks;
end.
