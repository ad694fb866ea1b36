{ SPDX-License-Identifier: MIT }
{ Helper for test_errors: "cthreads, BriskMM". cthreads brings in the unit
  unix, which allocates when it initialises, so BriskMM is not first. }
program err_after_cthreads;

{$mode objfpc}{$H+}

uses
  cthreads, BriskMM, Classes;

begin
  Writeln('main ran');
end.
