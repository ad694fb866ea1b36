{ Runs the helper programs and checks how BriskMM reports mistakes: a clear
  message on stderr and a non-zero exit code, never a crash. Also checks that
  the statically linked program needs no libbrisk.so and the BRISK_SHARED one
  does. Prints "N passed, M failed".

  test_errors HELPER_DIR }
program test_errors;

{$mode objfpc}{$H+}

uses
  BriskMM, cthreads, Classes, SysUtils, BaseUnix, Unix;

{$I checks.inc}

var
  HelperDir, TempDir: string;

{ Runs a helper, returns its exit code (-1 when killed by a signal) and what
  it wrote on stdout and stderr. }
function RunHelper(const Command: string; out StdOut, StdErrText: string): Integer;
var
  Status: cint;
  Lines: TStringList;
begin
  Status := fpSystem(Command + ' >' + TempDir + '/out.txt 2>' + TempDir + '/err.txt');
  if WIFEXITED(Status) then
    Result := WEXITSTATUS(Status)
  else
    Result := -1;
  Lines := TStringList.Create;
  try
    Lines.LoadFromFile(TempDir + '/out.txt');
    StdOut := Lines.Text;
    Lines.LoadFromFile(TempDir + '/err.txt');
    StdErrText := Lines.Text;
  finally
    Lines.Free;
  end;
end;

procedure Expect(const Helper: string; ExitCode: Integer; const Message: string);
var
  Code: Integer;
  StdOut, StdErrText: string;
begin
  Code := RunHelper(HelperDir + '/' + Helper, StdOut, StdErrText);
  Check(Code = ExitCode, Format('%s exits with %d (got %d)', [Helper, ExitCode, Code]));
  if Message = '' then
    Check(StdErrText = '', Helper + ' writes nothing on stderr, got: ' + StdErrText)
  else
    Check(Pos(Message, StdErrText) > 0, Helper + ' says "' + Message + '" on stderr, got: ' + StdErrText);
  if ExitCode <> 0 then
    Check(Pos('main ran', StdOut) = 0, Helper + ' stops before its main program');
end;

function Needs(const Helper, Library_: string): Boolean;
var
  StdOut, StdErrText: string;
begin
  RunHelper('ldd ' + HelperDir + '/' + Helper, StdOut, StdErrText);
  Result := Pos(Library_, StdOut) > 0;
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
  Expect('err_after_cthreads', BriskExitNotFirst, 'must be the first unit');
  Expect('ok_minimal_heaptrc', BriskExitNotFirst, 'another memory manager');
  Expect('err_foreign_free', 204, 'which brisk did not allocate');

  Check(not Needs('ok_minimal', 'libbrisk'), 'the static build needs no libbrisk.so');
  Check(Needs('ok_minimal_shared', 'libbrisk.so'), 'the BRISK_SHARED build links libbrisk.so');

  DeleteFile(TempDir + '/out.txt');
  DeleteFile(TempDir + '/err.txt');
  RemoveDir(TempDir);
  FinishChecks;
end.
