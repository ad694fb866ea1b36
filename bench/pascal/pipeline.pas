{ SPDX-License-Identifier: MIT }
{ pipeline: one reader thread builds text lines and hands them, in batches
  through a bounded queue, to T worker threads, which split each line on Tab
  into a TStringList and free it. Every string is allocated by the reader and
  freed by a worker: the hand-off between threads that a memory manager with
  per-thread heaps pays for (the account of a log-processing service whose
  reader fed a pool of parsers). The lines are a pure function of their
  number, so the checksum of what the workers saw is known in advance and is
  the same under every memory manager. Built once per memory manager (see
  the uses clause).

  pipeline --threads T [--lines N] [--quick]

  The last line on stdout is "RESULT ok=1 ops=<lines> ..."; ok=0 when the
  workers' checksum differs from the one computed without allocating. }
program PipelineWorkload;

{$mode objfpc}{$H+}

uses
{$I memory_manager.inc}
  {$IFDEF UNIX}cthreads,{$ENDIF} Classes, SysUtils;

const
  BatchSize = 32;      { lines per queue entry }
  QueueSlots = 64;     { batches the queue holds before the reader waits }

type
  TBatch = array of AnsiString;

  { A bounded queue of batches: one lock, two events (not empty, not full). }
  TBatchQueue = class
  private
    FLock: TRTLCriticalSection;
    FNotEmpty, FNotFull: PRTLEvent;
    FSlots: array[0..QueueSlots - 1] of TBatch;
    FHead, FCount: Integer;
    FClosed: Boolean;
  public
    constructor Create;
    destructor Destroy; override;
    procedure Push(const Batch: TBatch);
    { False once the queue is closed and empty. }
    function Pop(out Batch: TBatch): Boolean;
    procedure Close;
  end;

  TWorker = class(TThread)
  protected
    procedure Execute; override;
  public
    Lines, Checksum: Int64;
    Error: string;
  end;

  TReader = class(TThread)
  protected
    procedure Execute; override;
  public
    Error: string;
  end;

constructor TBatchQueue.Create;
begin
  inherited Create;
  InitCriticalSection(FLock);
  FNotEmpty := RTLEventCreate;
  FNotFull := RTLEventCreate;
end;

destructor TBatchQueue.Destroy;
begin
  RTLEventDestroy(FNotEmpty);
  RTLEventDestroy(FNotFull);
  DoneCriticalSection(FLock);
  inherited Destroy;
end;

procedure TBatchQueue.Push(const Batch: TBatch);
begin
  repeat
    EnterCriticalSection(FLock);
    if FCount < QueueSlots then
    begin
      FSlots[(FHead + FCount) mod QueueSlots] := Batch;
      Inc(FCount);
      RTLEventSetEvent(FNotEmpty);
      LeaveCriticalSection(FLock);
      Exit;
    end;
    RTLEventResetEvent(FNotFull);
    LeaveCriticalSection(FLock);
    RTLEventWaitFor(FNotFull, 10);
  until False;
end;

function TBatchQueue.Pop(out Batch: TBatch): Boolean;
begin
  repeat
    EnterCriticalSection(FLock);
    if FCount > 0 then
    begin
      Batch := FSlots[FHead];
      FSlots[FHead] := nil;
      FHead := (FHead + 1) mod QueueSlots;
      Dec(FCount);
      RTLEventSetEvent(FNotFull);
      LeaveCriticalSection(FLock);
      Exit(True);
    end;
    if FClosed then
    begin
      RTLEventSetEvent(FNotEmpty);   { wake the next waiting worker too }
      LeaveCriticalSection(FLock);
      Exit(False);
    end;
    RTLEventResetEvent(FNotEmpty);
    LeaveCriticalSection(FLock);
    RTLEventWaitFor(FNotEmpty, 10);
  until False;
end;

procedure TBatchQueue.Close;
begin
  EnterCriticalSection(FLock);
  FClosed := True;
  RTLEventSetEvent(FNotEmpty);
  LeaveCriticalSection(FLock);
end;

{ Line N: 3 to 8 fields of 1 to 40 letters, separated by Tab. }
function FieldCount(N: Int64): Integer; inline;
begin
  Result := 3 + N mod 6;
end;

function FieldLength(N: Int64; Field: Integer): Integer; inline;
begin
  Result := 1 + (N * 7 + Field * 13) mod 40;
end;

function MakeLine(N: Int64): AnsiString;
var
  Field: Integer;
begin
  Result := StringOfChar(Chr(Ord('a') + N mod 26), FieldLength(N, 0));
  for Field := 1 to FieldCount(N) - 1 do
    Result := Result + #9 + StringOfChar(Chr(Ord('a') + (N + Field) mod 26), FieldLength(N, Field));
end;

{ What a worker adds for line N: its field count and its fields' lengths. }
function LineChecksum(N: Int64): Int64;
var
  Field: Integer;
begin
  Result := 1000 * FieldCount(N);
  for Field := 0 to FieldCount(N) - 1 do
    Inc(Result, FieldLength(N, Field));
end;

{$I workload_common.inc}

var
  LineQueue: TBatchQueue;
  LineTotal: Int64 = 500000;

procedure TReader.Execute;
var
  Batch: TBatch;
  N: Int64;
  Filled: Integer;
begin
  try
    N := 0;
    while N < LineTotal do
    begin
      SetLength(Batch, BatchSize);
      Filled := 0;
      while (Filled < BatchSize) and (N < LineTotal) do
      begin
        Batch[Filled] := MakeLine(N);
        Inc(Filled);
        Inc(N);
      end;
      SetLength(Batch, Filled);
      LineQueue.Push(Batch);
      Batch := nil;   { the worker that pops it frees it }
    end;
  except
    on E: Exception do
      Error := E.ClassName + ': ' + E.Message;
  end;
  LineQueue.Close;
end;

procedure TWorker.Execute;
var
  Batch: TBatch;
  Fields: TStringList;
  I, F: Integer;
begin
  Fields := TStringList.Create;
  try
    try
      Fields.Delimiter := #9;
      Fields.StrictDelimiter := True;
      while LineQueue.Pop(Batch) do
      begin
        for I := 0 to High(Batch) do
        begin
          Fields.DelimitedText := Batch[I];
          Inc(Checksum, 1000 * Fields.Count);
          for F := 0 to Fields.Count - 1 do
            Inc(Checksum, Length(Fields[F]));
          Inc(Lines);
        end;
        Batch := nil;   { the reader's strings, freed on this thread }
        Fields.Clear;
      end;
    except
      on E: Exception do
        Error := E.ClassName + ': ' + E.Message;
    end;
  finally
    Fields.Free;
  end;
  ThreadFinished;
end;

procedure Fail(const Reason: string);
begin
  Writeln(StdErr, 'pipeline: ', Reason);
  Writeln('RESULT ok=0 ops=0');
  Halt(2);
end;

var
  ThreadCount: Integer = 1;
  I: Integer;
  Reader: TReader;
  Workers: array of TWorker;
  Lines, Checksum, Expected, N: Int64;
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
    else if (ParamStr(I) = '--lines') and (I < ParamCount) then
    begin
      LineTotal := StrToInt64Def(ParamStr(I + 1), 0);
      Inc(I, 2);
    end
    else if ParamStr(I) = '--quick' then
    begin
      LineTotal := 100000;
      Inc(I);
    end
    else
      Fail('usage: pipeline --threads T [--lines N] [--quick]');
  end;
  if ThreadCount < 1 then
    Fail('--threads must be at least 1');
  if LineTotal < 1 then
    Fail('--lines must be at least 1');

  LineQueue := TBatchQueue.Create;
  AllThreadsDone := RTLEventCreate;
  ThreadsRunning := ThreadCount;
  Started := GetTickCount64;
  SetLength(Workers, ThreadCount);
  for I := 0 to ThreadCount - 1 do
    Workers[I] := TWorker.Create(False);
  Reader := TReader.Create(False);
  RTLEventWaitFor(AllThreadsDone);
  Millis := GetTickCount64 - Started;
  RTLEventDestroy(AllThreadsDone);
  Reader.WaitFor;
  if Reader.Error <> '' then
    Fail('reader: ' + Reader.Error);
  Reader.Free;
  Lines := 0;
  Checksum := 0;
  for I := 0 to ThreadCount - 1 do
  begin
    Workers[I].WaitFor;
    if Workers[I].Error <> '' then
      Fail('worker ' + IntToStr(I) + ': ' + Workers[I].Error);
    Inc(Lines, Workers[I].Lines);
    Inc(Checksum, Workers[I].Checksum);
    Workers[I].Free;
  end;
  LineQueue.Free;

  Expected := 0;
  N := 0;
  while N < LineTotal do
  begin
    Inc(Expected, LineChecksum(N));
    Inc(N);
  end;
  if Lines <> LineTotal then
    Fail(Format('workers saw %d lines, expected %d', [Lines, LineTotal]));
  if Checksum <> Expected then
    Fail(Format('checksum %d, expected %d', [Checksum, Expected]));
  Writeln(Format('RESULT ok=1 ops=%d threads=%d checksum=%d ms=%d peak_rss_kib=%d',
    [Lines, ThreadCount, Checksum, Millis, PeakRssKiB]));
end.
