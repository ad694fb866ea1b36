{ SPDX-License-Identifier: MIT }
{ lines: the seed-000 workload in Free Pascal. T threads read their own text
  files line by line and split every line on Tab into a TStringList, the way
  the original program did; the total work is the same at every thread count
  (thread i reads files i, i+T, ...). Built three times, once per memory
  manager (see the uses clause), to compare them on identical code.

  lines --threads T --dir DIR [--reader readln|stream] [--keep] [--quick]

  --keep: each line is split into a TStringList of its own, and a thread
  keeps all of its file's lists until the file is done, then frees them
  (as the seed's program held its data, several GB). The peak RSS then
  shows the memory manager's footprint for many small live blocks, not just
  its cache for one line; the work per line includes creating and freeing
  that list. Without --keep one TStringList per thread is reused for every
  line.

  The last line on stdout is "RESULT ok=1 ops=<lines> ..."; the counts are
  checked against DIR/expect.txt (docs/CONTRACTS.md). --quick reads only the
  first T files and checks only that every line had at least one field. }
program LinesWorkload;

{$mode objfpc}{$H+}

uses
{$I memory_manager.inc}
  {$IFDEF UNIX}cthreads,{$ENDIF} Classes, SysUtils, Contnrs, streamex;

type
  TReaderKind = (rkReadLn, rkStream);

  TCounts = record
    Lines, Fields, Bytes, EmptyLines: Int64;
  end;

  TLineThread = class(TThread)
  private
    FIndex, FStride, FFileCount: Integer;
    FDir: string;
    FReader: TReaderKind;
    FKeep: Boolean;
    { --keep: the lists of the current file's lines, freed when it is done }
    FKept: TObjectList;
    function NewLineList: TStringList;
    procedure ProcessLine(const Line: string; List: TStringList);
    procedure ReadWithReadLn(const FileName: string; List: TStringList);
    procedure ReadWithStream(const FileName: string; List: TStringList);
  protected
    procedure Execute; override;
  public
    Counts: TCounts;
    Error: string;
    constructor Create(AIndex, AStride, AFileCount: Integer; const ADir: string;
      AReader: TReaderKind; AKeep: Boolean);
  end;

{$I workload_common.inc}

const
  ReaderNames: array[TReaderKind] of string = ('readln', 'stream');

constructor TLineThread.Create(AIndex, AStride, AFileCount: Integer; const ADir: string;
  AReader: TReaderKind; AKeep: Boolean);
begin
  FIndex := AIndex;
  FStride := AStride;
  FFileCount := AFileCount;
  FDir := ADir;
  FReader := AReader;
  FKeep := AKeep;
  FillChar(Counts, SizeOf(Counts), 0);
  inherited Create(False);
end;

function TLineThread.NewLineList: TStringList;
begin
  Result := TStringList.Create;
  Result.Delimiter := #9;
  Result.StrictDelimiter := True;
  Result.QuoteChar := #0;
end;

{ What the seed's program did with every line: split it on Tab into a list.
  The fields are then read back, so that the work cannot be skipped. With
  --keep the line gets a list of its own, kept until the file is done;
  otherwise the thread's one List is reused. }
procedure TLineThread.ProcessLine(const Line: string; List: TStringList);
var
  I: Integer;
begin
  if FKeep then
  begin
    List := NewLineList;
    FKept.Add(List);
  end;
  List.DelimitedText := Line;
  Inc(Counts.Lines);
  if List.Count = 0 then
    Inc(Counts.EmptyLines);
  Inc(Counts.Fields, List.Count);
  for I := 0 to List.Count - 1 do
    Inc(Counts.Bytes, Length(List[I]));
end;

procedure TLineThread.ReadWithReadLn(const FileName: string; List: TStringList);
var
  F: TextFile;
  Buffer: array[0..65535] of Byte;
  Line: string;
begin
  AssignFile(F, FileName);
  SetTextBuf(F, Buffer, SizeOf(Buffer));
  Reset(F);
  try
    while not Eof(F) do
    begin
      ReadLn(F, Line);
      ProcessLine(Line, List);
    end;
  finally
    CloseFile(F);
  end;
end;

procedure TLineThread.ReadWithStream(const FileName: string; List: TStringList);
var
  Stream: TFileStream;
  Reader: TStreamReader;
  Line: string;
begin
  Stream := TFileStream.Create(FileName, fmOpenRead or fmShareDenyNone);
  Reader := TStreamReader.Create(Stream, 65536, True);
  try
    while not Reader.Eof do
    begin
      Line := Reader.ReadLine;
      ProcessLine(Line, List);
    end;
  finally
    Reader.Free;
  end;
end;

procedure TLineThread.Execute;
var
  List: TStringList;
  FileIndex: Integer;
  FileName: string;
begin
  List := NewLineList;
  FKept := TObjectList.Create(True);
  try
    FileIndex := FIndex;
    while FileIndex < FFileCount do
    begin
      FileName := IncludeTrailingPathDelimiter(FDir) + 'lines_' + IntToStr(FileIndex) + '.txt';
      if FReader = rkReadLn then
        ReadWithReadLn(FileName, List)
      else
        ReadWithStream(FileName, List);
      FKept.Clear;   { --keep: the file is done, free its lines' lists }
      Inc(FileIndex, FStride);
    end;
  except
    on E: Exception do
      Error := E.ClassName + ': ' + E.Message;
  end;
  FKept.Free;
  List.Free;
  ThreadFinished;
end;

{ expect.txt: "files=N lines=L fields=F bytes=B" }
function ExpectValue(const Text, Key: string): Int64;
var
  Words: TStringList;
begin
  Words := TStringList.Create;
  try
    Words.Delimiter := ' ';
    Words.StrictDelimiter := True;
    Words.DelimitedText := Trim(Text);
    Result := StrToInt64Def(Words.Values[Key], -1);
  finally
    Words.Free;
  end;
end;

procedure Fail(const Reason: string);
begin
  Writeln(StdErr, 'lines: ', Reason);
  Writeln('RESULT ok=0 ops=0');
  Halt(2);
end;

var
  ThreadCount: Integer = 1;
  Dir: string = '';
  Reader: TReaderKind = rkReadLn;
  Keep: Boolean = False;
  Quick: Boolean = False;
  I, FileCount: Integer;
  Threads: array of TLineThread;
  Total: TCounts;
  ExpectText: TStringList;
  ExpectLine: string;
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
    else if (ParamStr(I) = '--dir') and (I < ParamCount) then
    begin
      Dir := ParamStr(I + 1);
      Inc(I, 2);
    end
    else if (ParamStr(I) = '--reader') and (I < ParamCount) then
    begin
      if ParamStr(I + 1) = 'readln' then Reader := rkReadLn
      else if ParamStr(I + 1) = 'stream' then Reader := rkStream
      else Fail('--reader must be readln or stream');
      Inc(I, 2);
    end
    else if ParamStr(I) = '--keep' then
    begin
      Keep := True;
      Inc(I);
    end
    else if ParamStr(I) = '--quick' then
    begin
      Quick := True;
      Inc(I);
    end
    else
      Fail('usage: lines --threads T --dir DIR [--reader readln|stream] [--keep] [--quick]');
  end;
  if ThreadCount < 1 then
    Fail('--threads must be at least 1');
  if Dir = '' then
    Fail('--dir DIR is required');

  ExpectText := TStringList.Create;
  try
    ExpectText.LoadFromFile(IncludeTrailingPathDelimiter(Dir) + 'expect.txt');
    ExpectLine := ExpectText.Text;
  except
    on E: Exception do
      Fail('cannot read ' + IncludeTrailingPathDelimiter(Dir) + 'expect.txt: ' + E.Message);
  end;
  ExpectText.Free;
  FileCount := ExpectValue(ExpectLine, 'files');
  if FileCount < 1 then
    Fail('expect.txt has no files=N');
  if Quick and (FileCount > ThreadCount) then
    FileCount := ThreadCount;

  AllThreadsDone := RTLEventCreate;
  ThreadsRunning := ThreadCount;
  Started := GetTickCount64;
  SetLength(Threads, ThreadCount);
  for I := 0 to ThreadCount - 1 do
    Threads[I] := TLineThread.Create(I, ThreadCount, FileCount, Dir, Reader, Keep);
  RTLEventWaitFor(AllThreadsDone);
  Millis := GetTickCount64 - Started;
  RTLEventDestroy(AllThreadsDone);
  FillChar(Total, SizeOf(Total), 0);
  for I := 0 to ThreadCount - 1 do
  begin
    Threads[I].WaitFor;
    if Threads[I].Error <> '' then
      Fail('thread ' + IntToStr(I) + ': ' + Threads[I].Error);
    Inc(Total.Lines, Threads[I].Counts.Lines);
    Inc(Total.Fields, Threads[I].Counts.Fields);
    Inc(Total.Bytes, Threads[I].Counts.Bytes);
    Inc(Total.EmptyLines, Threads[I].Counts.EmptyLines);
    Threads[I].Free;
  end;

  if Total.EmptyLines <> 0 then
    Fail(IntToStr(Total.EmptyLines) + ' lines had no field');
  if not Quick then
  begin
    if Total.Lines <> ExpectValue(ExpectLine, 'lines') then
      Fail(Format('read %d lines, expect.txt says %d', [Total.Lines, ExpectValue(ExpectLine, 'lines')]));
    if Total.Fields <> ExpectValue(ExpectLine, 'fields') then
      Fail(Format('split %d fields, expect.txt says %d', [Total.Fields, ExpectValue(ExpectLine, 'fields')]));
    if Total.Bytes <> ExpectValue(ExpectLine, 'bytes') then
      Fail(Format('fields hold %d bytes, expect.txt says %d', [Total.Bytes, ExpectValue(ExpectLine, 'bytes')]));
  end;
  Writeln(Format('RESULT ok=1 ops=%d lines=%d fields=%d bytes=%d threads=%d reader=%s keep=%d ms=%d peak_rss_kib=%d',
    [Total.Lines, Total.Lines, Total.Fields, Total.Bytes, ThreadCount,
     ReaderNames[Reader], Ord(Keep), Millis, PeakRssKiB]));
end.
