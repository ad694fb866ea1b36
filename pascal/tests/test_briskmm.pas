{ SPDX-License-Identifier: MIT }
{ Tests of BriskMM as the Free Pascal memory manager: the TMemoryManager
  contract (sizes, nil, zero, alignment, failures, foreign pointers, heap
  status) and the RTL features that live on it (strings, dynamic arrays,
  classes, TStringList, TObjectList, TMemoryStream, exceptions, threads that
  free what other threads allocated). Prints "N passed, M failed". }
program test_briskmm;

{$mode objfpc}{$H+}

uses
  BriskMM, {$IFDEF UNIX}cthreads,{$ENDIF} Classes, SysUtils, Contnrs;

{$I checks.inc}

const
  MiB = 1024 * 1024;

var
  { Memory that brisk did not allocate, for the foreign-pointer checks. }
  StaticBuffer: array[0..255] of Byte;

procedure TestInstalled;
var
  Manager: TMemoryManager;
  P: Pointer;
begin
  Check(BriskIsInstalled, 'BriskIsInstalled');
  Check(IsMemoryManagerSet, 'IsMemoryManagerSet');
  GetMemoryManager(Manager);
  Check(Assigned(Manager.GetHeapStatus) and Assigned(Manager.GetFPCHeapStatus)
    and Assigned(Manager.DoneThread), 'every entry of the record is set');
  Check(BriskVersion <> '', 'BriskVersion is not empty');
  P := GetMem(100);
  Check(BriskOwns(P), 'GetMem returns brisk memory');
  Check(not BriskOwns(@StaticBuffer[16]), 'a static buffer is not brisk memory');
  Check(not BriskOwns(nil), 'nil is not brisk memory');
  FreeMem(P);
end;

procedure TestSizesAndAlignment;
const
  Sizes: array[0..15] of PtrUInt = (1, 2, 7, 8, 15, 16, 17, 24, 100, 255, 256,
    1000, 4096, 65536, 1 * MiB, 16 * MiB);
var
  I: Integer;
  P: Pointer;
  Aligned, Big: Boolean;
  Alignment: PtrUInt;
begin
  Aligned := True;
  Big := True;
  for I := Low(Sizes) to High(Sizes) do
  begin
    P := GetMem(Sizes[I]);
    { The alignment of C's malloc (C11 7.22.3, DR 445): 16 bytes for blocks
      that can hold a 16-byte value, 8 below. FPC itself needs pointer size
      alignment only (its own cmem unit returns blocks 8 bytes off 16). }
    if Sizes[I] >= 16 then Alignment := 16 else Alignment := 8;
    if (PtrUInt(P) and (Alignment - 1)) <> 0 then
      Aligned := False;
    if MemSize(P) < Sizes[I] then
      Big := False;
    FillChar(P^, Sizes[I], $5A);   { the whole block is writable }
    FreeMem(P);
  end;
  Check(Aligned, 'blocks are 16-byte aligned (8 below 16 bytes)');
  Check(Big, 'MemSize >= the size asked for');

  P := GetMem(0);
  Check(P <> nil, 'GetMem(0) returns a block, as with the RTL''s heap');
  Check(MemSize(P) >= 1, 'MemSize of GetMem(0) >= 1');
  FreeMem(P);
  Check(FreeMem(nil) = 0, 'FreeMem(nil) does nothing');
  Check(MemSize(nil) = 0, 'MemSize(nil) = 0');

  GetMem(P, 100);
  Check(FreeMem(P) >= 100, 'FreeMem returns the size freed');

  { TP7 form with a size. }
  GetMem(P, 100);
  FreeMem(P, 100);
  GetMem(P, 100);
  FreeMem(P, 0);    { frees nothing, as the RTL's heap does }
  Check(MemSize(P) >= 100, 'FreeMem(P, 0) leaves the block alone');
  FreeMem(P, 100);
end;

procedure TestAllocMem;
const
  Sizes: array[0..6] of PtrUInt = (1, 24, 100, 1000, 20000, 300000, 4 * MiB);
var
  I, Round: Integer;
  P: PByte;
  J: PtrUInt;
  Zero: Boolean;
begin
  Zero := True;
  for Round := 1 to 20 do
    for I := Low(Sizes) to High(Sizes) do
    begin
      { dirty a block of that size first, so that AllocMem may reuse it }
      P := GetMem(Sizes[I]);
      FillChar(P^, Sizes[I], $FF);
      FreeMem(P);
      P := AllocMem(Sizes[I]);
      for J := 0 to Sizes[I] - 1 do
        if P[J] <> 0 then
        begin
          Zero := False;
          Break;
        end;
      FreeMem(P);
    end;
  Check(Zero, 'AllocMem zeroes the block');
  P := AllocMem(0);
  Check(P <> nil, 'AllocMem(0) returns a block');
  FreeMem(P);
end;

procedure TestReAllocMem;
var
  P: PByte;
  Size, J, NewSize: PtrUInt;
  Kept: Boolean;
begin
  P := nil;
  ReAllocMem(P, 10);
  Check(P <> nil, 'ReAllocMem(nil, 10) allocates');
  for J := 0 to 9 do
    P[J] := J;
  { grow step by step to 8 MiB, checking the contents every time }
  Kept := True;
  Size := 10;
  while Size < 8 * MiB do
  begin
    NewSize := Size + Size div 2 + 1;
    ReAllocMem(P, NewSize);
    for J := 0 to Size - 1 do
      if P[J] <> Byte(J) then
      begin
        Kept := False;
        Break;
      end;
    for J := Size to NewSize - 1 do
      P[J] := Byte(J);
    Size := NewSize;
  end;
  Check(Kept, 'ReAllocMem growth keeps the contents');
  Check(MemSize(P) >= Size, 'MemSize after growth');
  ReAllocMem(P, 1000);
  Kept := True;
  for J := 0 to 999 do
    if P[J] <> Byte(J) then
      Kept := False;
  Check(Kept, 'ReAllocMem shrink keeps the prefix');
  Check(MemSize(P) < 8 * MiB, 'a big block that shrinks gives its room back');
  Check(ReAllocMem(P, 0) = nil, 'ReAllocMem(P, 0) returns nil');
  Check(P = nil, 'ReAllocMem(P, 0) frees and sets P to nil');
end;

{ Small blocks stay put when they shrink, as with the RTL's default heap;
  the heap status follows every kind of ReAllocMem. }
procedure TestReAllocMemInPlace;
var
  P, Before: PByte;
  OldSize: PtrUInt;
  J: Integer;
  Kept: Boolean;
  S: string;
  UsedBefore: PtrUInt;
begin
  UsedBefore := GetFPCHeapStatus.CurrHeapUsed;
  P := GetMem(280);
  for J := 0 to 279 do
    P[J] := Byte(J);
  OldSize := MemSize(P);
  Before := P;
  ReAllocMem(P, 100);
  Check(P = Before, 'a small block that shrinks to less than half stays put');
  Check(MemSize(P) = OldSize, 'and keeps its size');
  Kept := True;
  for J := 0 to 99 do
    if P[J] <> Byte(J) then
      Kept := False;
  Check(Kept, 'and its contents');
  ReAllocMem(P, OldSize);
  Check(P = Before, 'growing back within the block stays put');
  ReAllocMem(P, OldSize + 1);
  Check(MemSize(P) > OldSize, 'growing past the block moves it');
  Check(P[99] = 99, 'the move keeps the contents');
  Check(GetFPCHeapStatus.CurrHeapUsed = UsedBefore + MemSize(P),
    'CurrHeapUsed follows ReAllocMem');
  FreeMem(P);
  Check(GetFPCHeapStatus.CurrHeapUsed = UsedBefore, 'CurrHeapUsed back after ReAllocMem and FreeMem');

  { what ReadLn does for every line: SetLength(S, 255), then to the length }
  S := '';
  SetLength(S, 255);
  FillChar(S[1], 255, 'x');
  Before := Pointer(S);
  SetLength(S, 40);
  Check(Pointer(S) = Before, 'SetLength shrinking a short string keeps it in place');
  Check((Length(S) = 40) and (S[40] = 'x'), 'and it holds the prefix');
end;

procedure TestFailures;
var
  P, Q: Pointer;
  Raised: Boolean;
begin
  { out of memory: EOutOfMemory, or nil when the program asks for it }
  Raised := False;
  try
    P := GetMem(High(PtrUInt) div 2);
    FreeMem(P);
  except
    on EOutOfMemory do Raised := True;
  end;
  Check(Raised, 'GetMem(huge) raises EOutOfMemory');
  ReturnNilIfGrowHeapFails := True;
  Check(GetMem(High(PtrUInt) div 2) = nil, 'GetMem(huge) = nil with ReturnNilIfGrowHeapFails');
  Check(AllocMem(High(PtrUInt) div 2) = nil, 'AllocMem(huge) = nil with ReturnNilIfGrowHeapFails');
  P := GetMem(64);
  Q := P;
  Check(ReAllocMem(P, High(PtrUInt) div 2) = nil, 'ReAllocMem(huge) = nil with ReturnNilIfGrowHeapFails');
  Check(P = Q, 'a failed ReAllocMem leaves the block');
  ReturnNilIfGrowHeapFails := False;
  Raised := False;
  try
    ReAllocMem(P, High(PtrUInt) div 2);
  except
    on EOutOfMemory do Raised := True;
  end;
  Check(Raised and (P = Q), 'ReAllocMem(huge) raises EOutOfMemory and leaves the block');
  FreeMem(P);

  { pointers brisk did not allocate: EInvalidPointer, nothing corrupted }
  Raised := False;
  try
    FreeMem(@StaticBuffer[16]);
  except
    on EInvalidPointer do Raised := True;
  end;
  Check(Raised, 'FreeMem(foreign) raises EInvalidPointer');
  Raised := False;
  try
    MemSize(@StaticBuffer[16]);
  except
    on EInvalidPointer do Raised := True;
  end;
  Check(Raised, 'MemSize(foreign) raises EInvalidPointer');
  Raised := False;
  P := @StaticBuffer[16];
  try
    ReAllocMem(P, 100);
  except
    on EInvalidPointer do Raised := True;
  end;
  Check(Raised and (P = @StaticBuffer[16]), 'ReAllocMem(foreign) raises EInvalidPointer');
  Raised := False;
  try
    FreeMem(@StaticBuffer[16], 8);
  except
    on EInvalidPointer do Raised := True;
  end;
  Check(Raised, 'FreeMem(foreign, size) raises EInvalidPointer');
  Raised := False;
  P := GetMem(100);
  try
    FreeMem(P, 1 * MiB);
  except
    on EInvalidPointer do Raised := True;
  end;
  Check(Raised, 'FreeMem(P, size larger than the block) raises EInvalidPointer');
  FreeMem(P);
end;

procedure TestStrings;
var
  S, T: string;
  U: UnicodeString;
  W: WideString;
  I: Integer;
  Ok: Boolean;
begin
  S := '';
  for I := 1 to 100000 do
    S := S + Chr(Ord('a') + I mod 26);
  Check(Length(S) = 100000, 'string grown by concatenation');
  Ok := True;
  for I := 1 to 100000 do
    if S[I] <> Chr(Ord('a') + I mod 26) then
      Ok := False;
  Check(Ok, 'string contents after growth');
  T := S;
  UniqueString(T);
  T[1] := 'X';
  Check((S[1] <> 'X') and (T[1] = 'X'), 'copy on write');
  SetLength(T, 10);
  Check(T = 'X' + Copy(S, 2, 9), 'SetLength shrink');
  S := '';
  for I := 1 to 20000 do
    S := IntToStr(I) + S;
  Check(Copy(S, 1, 5) = '20000', 'prepend loop');
  U := '';
  for I := 1 to 10000 do
    U := U + UnicodeString(IntToStr(I mod 10));
  Check(Length(U) = 10000, 'UnicodeString growth');
  W := WideString(U);
  Check(Length(W) = 10000, 'WideString from UnicodeString');
  S := Format('%d-%s-%.2f', [42, 'abc', 3.5]);
  Check(S = '42-abc-3.50', 'Format');
  S := StringReplace(StringOfChar('a', 1000), 'a', 'bb', [rfReplaceAll]);
  Check(Length(S) = 2000, 'StringReplace');
end;

procedure TestDynamicArrays;
type
  TIntArray = array of Integer;
var
  A, B: TIntArray;
  Grid: array of array of Int64;
  I, J: Integer;
  Ok: Boolean;
begin
  SetLength(A, 0);
  for I := 0 to 99999 do
  begin
    SetLength(A, I + 1);
    A[I] := I * 3;
  end;
  Ok := True;
  for I := 0 to High(A) do
    if A[I] <> I * 3 then
      Ok := False;
  Check(Ok and (Length(A) = 100000), 'dynamic array grown one by one');
  B := Copy(A, 10, 100);
  B[0] := -1;
  Check((A[10] = 30) and (Length(B) = 100), 'Copy of a dynamic array is independent');
  SetLength(A, 5);
  Check(A[4] = 12, 'dynamic array shrink');
  SetLength(Grid, 300);
  for I := 0 to 299 do
  begin
    SetLength(Grid[I], I + 1);
    for J := 0 to I do
      Grid[I][J] := I * J;
  end;
  Check(Grid[299][299] = 299 * 299, 'ragged 2-D array');
  Grid := nil;
  A := nil;
  Check(Length(A) = 0, 'array freed by nil');
end;

type
  TCounted = class(TInterfacedObject)
    destructor Destroy; override;
  end;

  TSample = class
    Name: string;
    Data: array of Byte;
    constructor Create(I: Integer);
  end;

var
  CountedDestroyed: Integer = 0;

destructor TCounted.Destroy;
begin
  Inc(CountedDestroyed);
  inherited Destroy;
end;

constructor TSample.Create(I: Integer);
begin
  Name := 'sample ' + IntToStr(I);
  SetLength(Data, I mod 200);
end;

procedure TestClasses;
var
  List: TStringList;
  Objects: TObjectList;
  Stream: TMemoryStream;
  Intf: IInterface;
  I: Integer;
  Ok: Boolean;
begin
  List := TStringList.Create;
  try
    for I := 0 to 99999 do
      List.Add(IntToStr((I * 7919) mod 100000));
    List.Sort;
    Ok := True;
    for I := 1 to List.Count - 1 do
      if List[I - 1] > List[I] then
        Ok := False;
    Check(Ok and (List.Count = 100000), 'TStringList add and sort');
    List.Delimiter := #9;
    List.StrictDelimiter := True;
    List.DelimitedText := 'a'#9'bb'#9'ccc';
    Check((List.Count = 3) and (List[2] = 'ccc'), 'TStringList split on Tab');
  finally
    List.Free;
  end;

  Objects := TObjectList.Create(True);
  try
    for I := 0 to 49999 do
      Objects.Add(TSample.Create(I));
    for I := Objects.Count - 1 downto 0 do
      if I mod 3 = 0 then
        Objects.Delete(I);
    Check(Objects.Count = 33333, 'TObjectList deletes');
    Check(TSample(Objects[0]).Name = 'sample 1', 'TObjectList keeps the others');
  finally
    Objects.Free;
  end;

  Stream := TMemoryStream.Create;
  try
    for I := 0 to 99999 do
      Stream.WriteBuffer(I, SizeOf(I));
    Check(Stream.Size = 400000, 'TMemoryStream growth');
  finally
    Stream.Free;
  end;

  Ok := True;
  for I := 1 to 1000 do
  begin
    Intf := TCounted.Create;
    Ok := Ok and (Intf <> nil);
  end;
  Intf := nil;
  Check(Ok, 'interfaces created');
  Check(CountedDestroyed = 1000, 'reference-counted interfaces are freed');

  Ok := False;
  for I := 1 to 1000 do
    try
      raise Exception.CreateFmt('error %d', [I]);
    except
      on E: Exception do
        Ok := E.Message = 'error ' + IntToStr(I);
    end;
  Check(Ok, 'exceptions allocated and freed');
end;

{ --- threads ---------------------------------------------------------------- }

const
  ProducerCount = 4;
  ItemsPerProducer = 20000;

type
  TProducer = class(TThread)
  private
    FIndex: Integer;
  protected
    procedure Execute; override;
  public
    constructor Create(Index: Integer);
  end;

  TConsumer = class(TThread)
  protected
    procedure Execute; override;
  public
    Consumed: Integer;
    BadItems: Integer;
    constructor Create;
  end;

var
  SharedQueue: TThreadList;
  ProducersDone: LongInt = 0;

constructor TProducer.Create(Index: Integer);
begin
  FIndex := Index;
  inherited Create(False);
end;

{ Allocate objects, strings and raw blocks that another thread frees. }
procedure TProducer.Execute;
var
  I: Integer;
  Item: TSample;
begin
  for I := 0 to ItemsPerProducer - 1 do
  begin
    Item := TSample.Create(I);
    Item.Name := Item.Name + ' from ' + IntToStr(FIndex);
    SharedQueue.Add(Item);
  end;
  InterlockedIncrement(ProducersDone);
end;

constructor TConsumer.Create;
begin
  inherited Create(False);
end;

procedure TConsumer.Execute;
var
  List: TList;
  Batch: array of TSample;
  I: Integer;
  AllProduced: Boolean;
begin
  repeat
    AllProduced := ProducersDone = ProducerCount;
    List := SharedQueue.LockList;
    try
      SetLength(Batch, List.Count);
      for I := 0 to List.Count - 1 do
        Batch[I] := TSample(List[I]);
      List.Clear;
    finally
      SharedQueue.UnlockList;
    end;
    for I := 0 to High(Batch) do
    begin
      if Pos(' from ', Batch[I].Name) = 0 then
        Inc(BadItems);
      Batch[I].Free;   { freed on a thread that did not allocate it }
      Inc(Consumed);
    end;
    if Length(Batch) = 0 then
      Sleep(1);
  until AllProduced and (Length(Batch) = 0);
end;

type
  TKeeper = class(TThread)
  protected
    procedure Execute; override;
  public
    Block: Pointer;
    constructor Create;
  end;

constructor TKeeper.Create;
begin
  inherited Create(False);
end;

{ Allocates 8 MiB and ends without freeing it: the main thread frees it. }
procedure TKeeper.Execute;
begin
  Block := GetMem(8 * MiB);
  FillChar(Block^, 8 * MiB, 1);
end;

procedure TestThreads;
var
  Producers: array[0..ProducerCount - 1] of TProducer;
  Consumer: TConsumer;
  Keeper: TKeeper;
  I: Integer;
  Before, During, After: TFPCHeapStatus;
begin
  SharedQueue := TThreadList.Create;
  Consumer := TConsumer.Create;
  for I := 0 to ProducerCount - 1 do
    Producers[I] := TProducer.Create(I);
  for I := 0 to ProducerCount - 1 do
  begin
    Producers[I].WaitFor;
    Producers[I].Free;
  end;
  Consumer.WaitFor;
  Check(Consumer.Consumed = ProducerCount * ItemsPerProducer, 'every item crossed threads and was freed');
  Check(Consumer.BadItems = 0, 'items arrived intact');
  Consumer.Free;
  SharedQueue.Free;

  { blocks outlive the thread that allocated them; the heap status follows }
  Before := GetFPCHeapStatus;
  Keeper := TKeeper.Create;
  Keeper.WaitFor;
  During := GetFPCHeapStatus;
  Check(During.CurrHeapUsed >= Before.CurrHeapUsed + 8 * MiB,
    'a thread''s allocations are counted after it ends');
  FreeMem(Keeper.Block);
  After := GetFPCHeapStatus;
  Check(After.CurrHeapUsed + 8 * MiB <= During.CurrHeapUsed,
    'freeing another thread''s block is counted');
  Keeper.Free;
end;

{ --- heap status ---------------------------------------------------------------- }

procedure TestHeapStatus;
const
  Count = 1000;
var
  Blocks: array[0..Count - 1] of Pointer;
  Before, During, After: TFPCHeapStatus;
  Status: THeapStatus;
  I: Integer;
  Sum: PtrUInt;
  Info: TBriskMemoryInfo;
begin
  Before := GetFPCHeapStatus;
  Sum := 0;
  for I := 0 to Count - 1 do
  begin
    Blocks[I] := GetMem(1 + I * 37);
    Inc(Sum, MemSize(Blocks[I]));
  end;
  During := GetFPCHeapStatus;
  { this thread is the only one running: the figures are exact }
  Check(During.CurrHeapUsed = Before.CurrHeapUsed + Sum, 'CurrHeapUsed grows by the MemSize of new blocks');
  Check(During.CurrHeapSize >= During.CurrHeapUsed, 'CurrHeapSize >= CurrHeapUsed');
  Check(During.CurrHeapFree = During.CurrHeapSize - During.CurrHeapUsed, 'CurrHeapFree = size - used');
  Check(During.MaxHeapUsed >= During.CurrHeapUsed, 'MaxHeapUsed >= CurrHeapUsed');
  Check(During.MaxHeapSize >= During.CurrHeapSize, 'MaxHeapSize >= CurrHeapSize');
  Status := GetHeapStatus;
  Check(Status.TotalAllocated > 0, 'GetHeapStatus.TotalAllocated is real');
  Check(Status.TotalAddrSpace >= Status.TotalCommitted, 'TotalAddrSpace >= TotalCommitted');
  Check(Status.TotalCommitted > 0, 'GetHeapStatus.TotalCommitted is real');
  for I := 0 to Count - 1 do
    FreeMem(Blocks[I]);
  After := GetFPCHeapStatus;
  Check(After.CurrHeapUsed = Before.CurrHeapUsed, 'CurrHeapUsed back after FreeMem');
  Check(After.MaxHeapUsed >= During.CurrHeapUsed, 'MaxHeapUsed keeps the peak');
  Info := BriskMemoryInfo;
  Check((Info.Mapped > 0) and (Info.Committed > 0), 'BriskMemoryInfo has figures');
  BriskCollect;
  Check(GetFPCHeapStatus.CurrHeapUsed = After.CurrHeapUsed, 'BriskCollect frees no live block');
end;

begin
  TestInstalled;
  TestSizesAndAlignment;
  TestAllocMem;
  TestReAllocMem;
  TestReAllocMemInPlace;
  TestFailures;
  TestStrings;
  TestDynamicArrays;
  TestClasses;
  TestThreads;
  TestHeapStatus;
  FinishChecks;
end.
