{ SPDX-License-Identifier: MIT }
{ objects: the seed-004 workload in Free Pascal ("Memory allocation in a
  parallel world", Mastering Delphi Programming). A parallel loop runs
  Execute on every object of a list; each Execute builds a TObjectList of
  small objects (strings, dynamic arrays, a nested list), reads them back and
  deletes them again, so that FreeMem is called as often as GetMem, from
  every thread at once. The total work is the same at every thread count:
  the loop's items are handed out to T threads in chunks from a shared
  counter, like TParallel.For does. Built three times, once per memory
  manager (see the uses clause).

  objects --threads T [--items N] [--objects K] [--quick]

  The last line on stdout is "RESULT ok=1 ops=<objects created> ..."; the
  checksum of what Execute read back is compared with one computed without
  allocating. }
program ObjectsWorkload;

{$mode objfpc}{$H+}

uses
{$I memory_manager.inc}
  {$IFDEF UNIX}cthreads,{$ENDIF} Classes, SysUtils, Contnrs;

const
  Rounds = 4;          { times each Execute fills and empties its list }
  ChunkSize = 4;       { items a thread takes from the shared counter at once }

type
  { One small object of the kind real programs are full of. }
  TNode = class
  public
    Name: string;
    Values: array of Integer;
    Tags: TStringList;
    constructor Create(Item, Index: Integer);
    destructor Destroy; override;
    function Checksum: Int64;
  end;

  { One element of the parallel loop, as in the book's TSpeedTest. }
  TWorkItem = class
  private
    FItem, FObjectCount: Integer;
  public
    Checksum: Int64;
    Created: Int64;
    constructor Create(Item, ObjectCount: Integer);
    procedure Execute;
  end;

  TWorkerThread = class(TThread)
  protected
    procedure Execute; override;
  public
    Error: string;
    constructor Create;
  end;

{ The sizes are a pure function of (item, index), so that the expected
  checksum can be computed without allocating anything. }
function NameLength(Item, Index: Integer): Integer; inline;
begin
  Result := 1 + (Item * 31 + Index * 17) mod 60;
end;

function ValueCount(Item, Index: Integer): Integer; inline;
begin
  Result := (Item * 7 + Index * 13) mod 24;
end;

function TagCount(Item, Index: Integer): Integer; inline;
begin
  Result := (Item + Index) mod 3;
end;

constructor TNode.Create(Item, Index: Integer);
var
  I: Integer;
begin
  Name := StringOfChar(Chr(Ord('a') + Index mod 26), NameLength(Item, Index));
  SetLength(Values, ValueCount(Item, Index));
  for I := 0 to High(Values) do
    Values[I] := Item + I;
  if TagCount(Item, Index) > 0 then
  begin
    Tags := TStringList.Create;
    for I := 1 to TagCount(Item, Index) do
      Tags.Add(IntToStr(Index * 10 + I));
  end;
end;

destructor TNode.Destroy;
begin
  Tags.Free;
  inherited Destroy;
end;

function TNode.Checksum: Int64;
var
  I: Integer;
begin
  Result := Length(Name) + Length(Values);
  for I := 0 to High(Values) do
    Inc(Result, Values[I]);
  if Tags <> nil then
    Inc(Result, Tags.Count);
end;

constructor TWorkItem.Create(Item, ObjectCount: Integer);
begin
  FItem := Item;
  FObjectCount := ObjectCount;
end;

{ Fill a TObjectList, read it, then delete the objects: first every other
  one in place (assigning nil to an owned item frees it), then Pack, then the
  rest from the end with Delete. The list owns its objects, so each of these
  frees one; the blocks go back in an order that is not simply the reverse
  of allocation. }
procedure TWorkItem.Execute;
var
  List: TObjectList;
  Round, I: Integer;
begin
  for Round := 1 to Rounds do
  begin
    List := TObjectList.Create(True);
    try
      for I := 0 to FObjectCount - 1 do
        List.Add(TNode.Create(FItem, I));
      Inc(Created, FObjectCount);
      for I := 0 to List.Count - 1 do
        Inc(Checksum, TNode(List[I]).Checksum);
      I := Round mod 2;
      while I < List.Count do
      begin
        List[I] := nil;   { frees the TNode }
        Inc(I, 2);
      end;
      List.Pack;
      while List.Count > 0 do
        List.Delete(List.Count - 1);
    finally
      List.Free;
    end;
  end;
end;

{$I workload_common.inc}

var
  Items: array of TWorkItem;
  NextItem: LongInt = 0;

constructor TWorkerThread.Create;
begin
  inherited Create(False);
end;

procedure TWorkerThread.Execute;
var
  First, I: LongInt;
begin
  try
    repeat
      First := InterlockedExchangeAdd(NextItem, ChunkSize);
      for I := First to First + ChunkSize - 1 do
        if I <= High(Items) then
          Items[I].Execute;
    until First + ChunkSize > High(Items);
  except
    on E: Exception do
      Error := E.ClassName + ': ' + E.Message;
  end;
  ThreadFinished;
end;

function ExpectedChecksum(ItemCount, ObjectCount: Integer): Int64;
var
  Item, Index, I, N: Integer;
  Sum: Int64;
begin
  Sum := 0;
  for Item := 0 to ItemCount - 1 do
    for Index := 0 to ObjectCount - 1 do
    begin
      N := ValueCount(Item, Index);
      Inc(Sum, NameLength(Item, Index) + N + TagCount(Item, Index));
      for I := 0 to N - 1 do
        Inc(Sum, Item + I);
    end;
  Result := Sum * Rounds;
end;

procedure Fail(const Reason: string);
begin
  Writeln(StdErr, 'objects: ', Reason);
  Writeln('RESULT ok=0 ops=0');
  Halt(2);
end;

var
  ThreadCount: Integer = 1;
  ItemCount: Integer = 2000;
  ObjectCount: Integer = 1000;
  I: Integer;
  Threads: array of TWorkerThread;
  Checksum, Created: Int64;
  Started: QWord;
  Millis: Int64;

begin
  I := 1;
  while I <= ParamCount do
  begin
    if (ParamStr(I) = '--threads') and (I < ParamCount) then
    begin
      ThreadCount := StrToIntDef(ParamStr(I + 1), 0);
      Inc(I, 2);
    end
    else if (ParamStr(I) = '--items') and (I < ParamCount) then
    begin
      ItemCount := StrToIntDef(ParamStr(I + 1), 0);
      Inc(I, 2);
    end
    else if (ParamStr(I) = '--objects') and (I < ParamCount) then
    begin
      ObjectCount := StrToIntDef(ParamStr(I + 1), 0);
      Inc(I, 2);
    end
    else if ParamStr(I) = '--quick' then
    begin
      ItemCount := 100;
      Inc(I);
    end
    else
      Fail('usage: objects --threads T [--items N] [--objects K] [--quick]');
  end;
  if ThreadCount < 1 then
    Fail('--threads must be at least 1');
  if (ItemCount < 1) or (ObjectCount < 1) then
    Fail('--items and --objects must be at least 1');

  SetLength(Items, ItemCount);
  for I := 0 to ItemCount - 1 do
    Items[I] := TWorkItem.Create(I, ObjectCount);

  AllThreadsDone := RTLEventCreate;
  ThreadsRunning := ThreadCount;
  Started := GetTickCount64;
  SetLength(Threads, ThreadCount);
  for I := 0 to ThreadCount - 1 do
    Threads[I] := TWorkerThread.Create;
  RTLEventWaitFor(AllThreadsDone);
  Millis := GetTickCount64 - Started;
  RTLEventDestroy(AllThreadsDone);
  for I := 0 to ThreadCount - 1 do
  begin
    Threads[I].WaitFor;
    if Threads[I].Error <> '' then
      Fail('thread ' + IntToStr(I) + ': ' + Threads[I].Error);
    Threads[I].Free;
  end;

  Checksum := 0;
  Created := 0;
  for I := 0 to ItemCount - 1 do
  begin
    Inc(Checksum, Items[I].Checksum);
    Inc(Created, Items[I].Created);
    Items[I].Free;
  end;
  if Created <> Int64(ItemCount) * ObjectCount * Rounds then
    Fail(Format('created %d objects, expected %d', [Created, Int64(ItemCount) * ObjectCount * Rounds]));
  if Checksum <> ExpectedChecksum(ItemCount, ObjectCount) then
    Fail(Format('checksum %d, expected %d', [Checksum, ExpectedChecksum(ItemCount, ObjectCount)]));
  Writeln(Format('RESULT ok=1 ops=%d items=%d objects=%d threads=%d checksum=%d ms=%d peak_rss_kib=%d',
    [Created, ItemCount, ObjectCount, ThreadCount, Checksum, Millis, PeakRssKiB]));
end.
