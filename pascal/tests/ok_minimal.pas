{ SPDX-License-Identifier: MIT }
{ Helper for test_errors: the adoption line as documented. Also built with
  -gh (heaptrc), where BriskMM must refuse to start, and with -dBRISK_SHARED. }
program ok_minimal;

{$mode objfpc}{$H+}

uses
  BriskMM, {$IFDEF UNIX}cthreads,{$ENDIF} Classes, SysUtils;

var
  List: TStringList;
begin
  List := TStringList.Create;
  List.Add('brisk ' + BriskVersion);
  Writeln(List[0]);
  List.Free;
end.
