{ SPDX-License-Identifier: MIT }
unit mainform;

{$mode objfpc}{$H+}

interface

uses
  Classes, Forms, StdCtrls, BriskMM;

type
  TMainWindow = class(TForm)
  public
    constructor Create(TheOwner: TComponent); override;
  end;

implementation

constructor TMainWindow.Create(TheOwner: TComponent);
var
  Status: TLabel;
begin
  inherited CreateNew(TheOwner);
  Caption := 'brisk';
  Status := TLabel.Create(Self);
  Status.Parent := Self;
  Status.Caption := 'memory manager: brisk ' + BriskVersion;
end;

end.
