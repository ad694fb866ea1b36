{ SPDX-License-Identifier: MIT }
{ The leaks of leak_report.pas, in a unit of their own so that the report
  must name this file. The lines marked "leak:" are the ones the report must
  show (leak_report.sh finds them by the marks). }
unit leak_unit;

{$mode objfpc}{$H+}

interface

type
  TLeakedCustomer = class
    Name: AnsiString;
    Id: Integer;
  end;

procedure LeakCustomers(Count: Integer);
procedure LeakBuffer;

implementation

procedure LeakCustomers(Count: Integer);
var
  Customer: TLeakedCustomer;
  I: Integer;
begin
  for I := 1 to Count do
  begin
    Customer := TLeakedCustomer.Create; { leak: customers }
    Customer.Id := I;
  end;
end;

procedure LeakBuffer;
var
  Buffer: Pointer;
begin
  GetMem(Buffer, 1000); { leak: buffer }
  PByte(Buffer)^ := 1;
end;

end.
