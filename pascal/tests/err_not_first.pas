{ SPDX-License-Identifier: MIT }
{ Helper for test_errors: BriskMM after a unit that allocates when it
  initialises. Must stop with exit code 3 and a message, before main runs. }
program err_not_first;

{$mode objfpc}{$H+}

uses
  Classes, BriskMM;

begin
  Writeln('main ran');
end.
