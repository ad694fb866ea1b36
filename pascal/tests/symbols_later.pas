{ SPDX-License-Identifier: MIT }
{ A program that leaks three chains of objects, for symbols_later_test.py:
  run under Wine with BRISK_LEAKS=1 and BRISK_SYMBOLS_LATER=1, its leak
  report gives each frame as module, offset and PE timestamp; `brisk
  symbolize` then names them from the map fpc -Xm wrote beside it and the
  line information of -gl. The test finds the lines below by their marks. }
program symbols_later;

{$mode objfpc}

uses
  BriskMM, SysUtils;

type
  TChainLink = class
    Next: TChainLink;
  end;

function MakeChain(Depth: Integer): TChainLink;
begin
  Result := TChainLink.Create; { mark: allocated }
  if Depth > 0 then
    Result.Next := MakeChain(Depth - 1);
end;

procedure LeakChains;
var
  I: Integer;
begin
  for I := 1 to 3 do
    MakeChain(2); { mark: called }
end;

begin
  LeakChains;
end.
