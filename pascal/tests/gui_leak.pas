{ SPDX-License-Identifier: MIT }
{ A Windows GUI program (no console, so no standard error) that leaks one
  object: gui_log.sh runs it under Wine with BRISK_LEAKS=1 and checks that
  the leak report went to gui_leak.brisk.log beside it. Built with -gh too,
  where BriskMM's own message (not first) must go there. }
program gui_leak;

{$APPTYPE GUI}
{$mode objfpc}

uses
  BriskMM, SysUtils;

type
  TGuiLeak = class
    Value: Integer;
  end;

begin
  TGuiLeak.Create.Value := 1;
end.
