{ SPDX-License-Identifier: MIT }
{ A console program of a Lazarus project that requires the brisk package and
  does not name BriskMM: the package puts it first (-FaBriskMM). Prints
  whether brisk is the memory manager, after allocating on two threads. }
program console;

{$mode objfpc}{$H+}

uses
  {$IFDEF UNIX}cthreads,{$ENDIF}
  Classes, SysUtils;

type
  TWorker = class(TThread)
  protected
    procedure Execute; override;
  end;

procedure TWorker.Execute;
var
  Lines: TStringList;
  I: Integer;
begin
  Lines := TStringList.Create;
  for I := 1 to 10000 do
    Lines.Add(IntToStr(I));
  Lines.Free;
end;

var
  Worker: TWorker;
begin
  Worker := TWorker.Create(False);
  Worker.WaitFor;
  Worker.Free;
  { BriskMM's identifiers are visible without naming the unit: -Fa loaded it. }
  WriteLn('brisk installed: ', BriskIsInstalled, ', owns a new object: ',
    BriskOwns(Pointer(TObject.Create)));
end.
