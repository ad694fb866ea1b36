{ SPDX-License-Identifier: MIT }
{ Leaks three objects and a buffer (leak_unit.pas) and frees everything
  else, for leak_report.sh, which runs it with BRISK_LEAKS and checks that
  the report names the unit, the routine and the line of each leak, and the
  class of the objects. Built with -O1 -gl, as for debugging. }
program leak_report;

{$mode objfpc}{$H+}

uses
  BriskMM, {$IFDEF UNIX}cthreads,{$ENDIF} Classes, SysUtils, leak_unit;

var
  Kept: TStringList;
begin
  Kept := TStringList.Create;
  Kept.Add('freed before the end');
  Kept.Free;
  LeakCustomers(3);
  LeakBuffer;
  WriteLn('leaked');
end.
