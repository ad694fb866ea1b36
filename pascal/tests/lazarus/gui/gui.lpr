{ SPDX-License-Identifier: MIT }
{ An LCL program of a Lazarus project that requires the brisk package, as
  Lazarus writes a new application (Interfaces, Forms), with a form built in
  code. The test builds it and does not run it (it needs a display). }
program gui;

{$mode objfpc}{$H+}

uses
  {$IFDEF UNIX}cthreads,{$ENDIF}
  Interfaces, Forms, StdCtrls, mainform;

var
  MainWindow: TMainWindow;
begin
  RequireDerivedFormResource := False;
  Application.Scaled := True;
  Application.Initialize;
  Application.CreateForm(TMainWindow, MainWindow);
  Application.Run;
end.
