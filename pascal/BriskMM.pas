{ BriskMM: the brisk allocator as the Free Pascal memory manager.

  Adoption is one line: put BriskMM first in the program's uses clause.

    program MyApp;
    uses
      BriskMM, cthreads, Classes, SysUtils;

  and compile with the folder holding libbrisk.a on the library path:

    fpc -Fu<brisk>/pascal -Fl<brisk>/build MyApp.pas

  The result is one executable: libbrisk.a is linked in statically, nothing is
  deployed beside it. Define BRISK_SHARED (fpc -dBRISK_SHARED) to link
  libbrisk.so.0 instead; the program then needs that library at run time.

  Why first: a memory manager can only free what it allocated. Every unit
  initialised before BriskMM allocates from the manager that was active then,
  and those blocks would later reach brisk. BriskMM therefore checks, when it
  initialises, that no other manager is installed (heaptrc from -gh, cmem, ...)
  and that the RTL's default heap has not handed out a block yet. If either is
  false it writes what to do on stderr and ends the program with exit code 3,
  before installing itself, so nothing has been mixed. At run time every
  pointer given to FreeMem, FreeMemSize, ReAllocMem or MemSize is checked with
  brisk_owns; a pointer brisk did not allocate gives a message on stderr and
  runtime error 204 (EInvalidPointer when SysUtils is used) instead of memory
  corruption.

  Order with cthreads: "BriskMM, cthreads", in that order. BriskMM needs no
  thread manager (brisk keeps its per-thread state in C thread-local storage
  and this unit's counters use atomic operations), while cthreads brings in
  the unit "unix", whose initialisation allocates (it reads the time zone
  file); "cthreads, BriskMM" is therefore reported as not first.

  Heap status: GetHeapStatus and GetFPCHeapStatus report real, process-wide
  figures (the RTL's default heap reports the calling thread's heap only).
  Sizes come from brisk_memory_info_get (committed = memory brisk holds from
  the OS); "used" is the sum of MemSize of the live blocks, counted by this
  unit. Each thread counts in a thread variable and adds its count to a global
  total when it has drifted by FlushBytes, when it ends, and when it asks for
  the status. CurrHeapUsed is therefore exact for a single-threaded program
  and within FlushBytes per other running thread otherwise; MaxHeapUsed is the
  peak of that total. }
unit BriskMM;

{$mode objfpc}
{ The memory manager runs underneath every check the user may have turned on
  for the program (-Cr, -Co, -Ct, -Ci); none of them may fire in here. }
{$R-}{$Q-}{$S-}{$I-}
{$implicitexceptions off}
{$inline on}

interface

const
  { Exit code when BriskMM finds at initialisation that it is not first. }
  BriskExitNotFirst = 3;
  { A thread publishes its count of used bytes once it has drifted this far. }
  FlushBytes = 64 * 1024;

type
  { Mirror of brisk_memory_info in include/brisk.h. }
  TBriskMemoryInfo = record
    StructSize: PtrUInt;     { set by the caller to SizeOf(TBriskMemoryInfo) }
    Mapped: PtrUInt;         { address space currently mapped from the OS }
    MappedPeak: PtrUInt;
    Committed: PtrUInt;      { mapped minus purged: an upper bound on resident }
    CommittedPeak: PtrUInt;
    LargeInUse: PtrUInt;     { bytes in live blocks served directly by the OS }
  end;

{ The parts of the C API (include/brisk.h) that a Pascal program may want
  besides the memory manager itself. }
function BriskVersion: AnsiString;
function BriskOwns(P: Pointer): Boolean;
procedure BriskCollect;
function BriskMemoryInfo: TBriskMemoryInfo;
{ True when BriskMM is the installed memory manager. }
function BriskIsInstalled: Boolean;

implementation

{ --- the C API ------------------------------------------------------------ }

{$MACRO ON}
{$IFDEF BRISK_SHARED}
const
  BriskLibName = 'brisk';   { libbrisk.so(.0), found by the dynamic loader }
{$DEFINE BRISK_EXTERNAL := external BriskLibName name}
{$ELSE}
  { The archive is looked up on the library path (-Fl). Naming the file, not
    just "brisk", makes ld take libbrisk.a even when libbrisk.so lies in the
    same folder. libbrisk.a calls into libc (mmap, pthread keys, dlsym), so
    the program is linked against libc like any program using cthreads;
    pthread and dl are named for glibc before 2.34, where they were separate
    libraries (since then they are empty stubs). }
  {$LINKLIB libbrisk.a}
  {$LINKLIB c}
  {$LINKLIB pthread}
  {$LINKLIB dl}
{$DEFINE BRISK_EXTERNAL := external name}
{$ENDIF}

function brisk_version: PAnsiChar; cdecl; BRISK_EXTERNAL 'brisk_version';
function brisk_malloc(Size: PtrUInt): Pointer; cdecl; BRISK_EXTERNAL 'brisk_malloc';
function brisk_calloc(Count, Size: PtrUInt): Pointer; cdecl; BRISK_EXTERNAL 'brisk_calloc';
function brisk_realloc(Block: Pointer; Size: PtrUInt): Pointer; cdecl; BRISK_EXTERNAL 'brisk_realloc';
procedure brisk_free(Block: Pointer); cdecl; BRISK_EXTERNAL 'brisk_free';
function brisk_usable_size(Block: Pointer): PtrUInt; cdecl; BRISK_EXTERNAL 'brisk_usable_size';
function brisk_owns(Block: Pointer): LongInt; cdecl; BRISK_EXTERNAL 'brisk_owns';
procedure brisk_collect; cdecl; BRISK_EXTERNAL 'brisk_collect';
function brisk_memory_info_get(var Info: TBriskMemoryInfo): LongInt; cdecl; BRISK_EXTERNAL 'brisk_memory_info_get';

{ --- used-bytes accounting ------------------------------------------------- }

var
  { Bytes in live blocks, as published by all threads. Int64 so that the
    Interlocked*64 functions apply; the unit only targets 64-bit. }
  GlobalUsed: Int64 = 0;
  GlobalPeak: Int64 = 0;
  Installed: Boolean = False;

threadvar
  { Bytes this thread allocated minus bytes it freed since it last published.
    May go negative: a thread may free blocks another thread allocated. }
  ThreadDelta: PtrInt;

procedure PublishDelta(Delta: PtrInt);
var
  NewUsed, Peak: Int64;
begin
  NewUsed := InterlockedExchangeAdd64(GlobalUsed, Delta) + Delta;
  Peak := GlobalPeak;
  while NewUsed > Peak do
  begin
    if InterlockedCompareExchange64(GlobalPeak, NewUsed, Peak) = Peak then
      Break;
    Peak := GlobalPeak;
  end;
end;

{ Called on every allocation and free with the change in used bytes. The
  common case is one thread-variable lookup and an add. }
procedure CountBytes(Change: PtrInt); inline;
var
  Delta: ^PtrInt;
  D: PtrInt;
begin
  Delta := @ThreadDelta;
  D := Delta^ + Change;
  if (D >= FlushBytes) or (D <= -FlushBytes) then
  begin
    Delta^ := 0;
    PublishDelta(D);
  end
  else
    Delta^ := D;
end;

procedure FlushThreadDelta;
var
  Delta: ^PtrInt;
  D: PtrInt;
begin
  Delta := @ThreadDelta;
  D := Delta^;
  if D <> 0 then
  begin
    Delta^ := 0;
    PublishDelta(D);
  end;
end;

{ --- errors ----------------------------------------------------------------- }

{ The RTL's own way to raise a runtime error from inside the heap: unlike
  RunError it goes through ErrorProc, so that with SysUtils 203 becomes
  EOutOfMemory and 204 EInvalidPointer, exactly as with the default heap. }
procedure HandleError(ErrorNumber: LongInt); external name 'FPC_HANDLEERROR';

procedure ForeignPointer(const Operation: ShortString; P: Pointer);
begin
  Writeln(StdErr, 'BriskMM: ', Operation, ' was given pointer $', HexStr(P),
    ', which brisk did not allocate.');
  Writeln(StdErr, 'BriskMM: memory from another memory manager (or a pointer that was never',
    ' allocated) reached BriskMM; is BriskMM the first unit in the program''s uses clause?');
  Flush(StdErr);
  HandleError(204);   { invalid pointer operation; EInvalidPointer with SysUtils }
end;

{ Allocation failed: the RTL contract is runtime error 203 (EOutOfMemory with
  SysUtils) unless the program asked for nil with ReturnNilIfGrowHeapFails. }
function OutOfMemory: Pointer;
begin
  if not ReturnNilIfGrowHeapFails then
    HandleError(203);
  Result := nil;
end;

{ --- TMemoryManager functions ---------------------------------------------- }

function BriskGetMem(Size: PtrUInt): Pointer;
begin
  { GetMem(0) returns a real block in FPC (the default heap allocates one
    byte), so that FreeMem and MemSize work on it like on any other. }
  if Size = 0 then
    Size := 1;
  Result := brisk_malloc(Size);
  if Result = nil then
    Exit(OutOfMemory);
  CountBytes(brisk_usable_size(Result));
end;

function BriskFreeMem(P: Pointer): PtrUInt;
begin
  if P = nil then
    Exit(0);
  if brisk_owns(P) = 0 then
    ForeignPointer('FreeMem', P);
  Result := brisk_usable_size(P);
  brisk_free(P);
  CountBytes(-PtrInt(Result));
end;

{ FreeMem(P, Size), the TP7 form. As in the RTL's default heap a Size of 0
  frees nothing; otherwise Size must not exceed the block (cmem checks it the
  same way), which catches a pointer freed with another block's size. }
function BriskFreeMemSize(P: Pointer; Size: PtrUInt): PtrUInt;
begin
  if (Size = 0) or (P = nil) then
    Exit(0);
  if brisk_owns(P) = 0 then
    ForeignPointer('FreeMem(P, Size)', P);
  Result := brisk_usable_size(P);
  if Size > Result then
  begin
    Writeln(StdErr, 'BriskMM: FreeMem(P, ', Size, ') on pointer $', HexStr(P),
      ', a block of only ', Result, ' bytes.');
    Flush(StdErr);
    HandleError(204);
  end;
  brisk_free(P);
  CountBytes(-PtrInt(Result));
end;

function BriskAllocMem(Size: PtrUInt): Pointer;
begin
  if Size = 0 then
    Size := 1;
  Result := brisk_calloc(1, Size);
  if Result = nil then
    Exit(OutOfMemory);
  CountBytes(brisk_usable_size(Result));
end;

{ ReAllocMem(P, 0) frees P and sets it to nil; ReAllocMem(nil, N) allocates.
  On failure P is left as it was (still valid) and nil is returned when
  ReturnNilIfGrowHeapFails is set, runtime error 203 otherwise. }
function BriskReAllocMem(var P: Pointer; Size: PtrUInt): Pointer;
var
  OldSize: PtrUInt;
  NewP: Pointer;
begin
  if Size = 0 then
  begin
    if P <> nil then
    begin
      BriskFreeMem(P);
      P := nil;
    end;
    Exit(nil);
  end;
  if P = nil then
  begin
    P := BriskGetMem(Size);
    Exit(P);
  end;
  if brisk_owns(P) = 0 then
    ForeignPointer('ReAllocMem', P);
  OldSize := brisk_usable_size(P);
  NewP := brisk_realloc(P, Size);
  if NewP = nil then
    Exit(OutOfMemory);
  P := NewP;
  CountBytes(PtrInt(brisk_usable_size(NewP)) - PtrInt(OldSize));
  Result := NewP;
end;

function BriskMemSize(P: Pointer): PtrUInt;
begin
  if P = nil then
    Exit(0);
  if brisk_owns(P) = 0 then
    ForeignPointer('MemSize', P);
  Result := brisk_usable_size(P);
end;

{ Never called by FPC 3.2.2 on Linux (the RTL only calls it on targets
  without the default heap), but part of the record's contract: a new thread
  starts with nothing counted. }
procedure BriskInitThread;
begin
  ThreadDelta := 0;
end;

{ A thread ends: publish what it counted, or its share of "used" is lost.
  brisk itself returns the thread's caches from its own thread-exit hook. }
procedure BriskDoneThread;
begin
  FlushThreadDelta;
end;

function ClampToCardinal(Value: PtrUInt): Cardinal; inline;
begin
  if Value > High(Cardinal) then
    Result := High(Cardinal)
  else
    Result := Cardinal(Value);
end;

function CurrentInfo: TBriskMemoryInfo;
begin
  FillChar(Result, SizeOf(Result), 0);
  Result.StructSize := SizeOf(Result);
  brisk_memory_info_get(Result);
end;

function BriskGetFPCHeapStatus: TFPCHeapStatus;
var
  Info: TBriskMemoryInfo;
  Used: Int64;
begin
  FlushThreadDelta;
  Info := CurrentInfo;
  Used := GlobalUsed;
  if Used < 0 then   { another thread freed blocks it has not published yet }
    Used := 0;
  Result.CurrHeapSize := Info.Committed;
  Result.MaxHeapSize := Info.CommittedPeak;
  Result.CurrHeapUsed := Used;
  Result.MaxHeapUsed := GlobalPeak;
  if Result.CurrHeapSize > Result.CurrHeapUsed then
    Result.CurrHeapFree := Result.CurrHeapSize - Result.CurrHeapUsed
  else
    Result.CurrHeapFree := 0;
end;

{ The Delphi-compatible record has 32-bit fields; larger figures saturate.
  brisk does not split its free memory into "small" and "big", so FreeSmall,
  FreeBig, Unused and Overhead are 0, as in the RTL's default heap. }
function BriskGetHeapStatus: THeapStatus;
var
  Status: TFPCHeapStatus;
  Info: TBriskMemoryInfo;
begin
  Status := BriskGetFPCHeapStatus;
  Info := CurrentInfo;
  FillChar(Result, SizeOf(Result), 0);
  Result.TotalAddrSpace := ClampToCardinal(Info.Mapped);
  Result.TotalCommitted := ClampToCardinal(Info.Committed);
  if Info.Mapped > Info.Committed then
    Result.TotalUncommitted := ClampToCardinal(Info.Mapped - Info.Committed);
  Result.TotalAllocated := ClampToCardinal(Status.CurrHeapUsed);
  Result.TotalFree := ClampToCardinal(Status.CurrHeapFree);
end;

const
  BriskMemoryManager: TMemoryManager = (
    NeedLock: False;   { obsolete in the RTL; brisk is thread-safe anyway }
    GetMem: @BriskGetMem;
    FreeMem: @BriskFreeMem;
    FreeMemSize: @BriskFreeMemSize;
    AllocMem: @BriskAllocMem;
    ReAllocMem: @BriskReAllocMem;
    MemSize: @BriskMemSize;
    InitThread: @BriskInitThread;
    DoneThread: @BriskDoneThread;
    RelocateHeap: nil;   { brisk's state does not live in Pascal threadvars }
    GetHeapStatus: @BriskGetHeapStatus;
    GetFPCHeapStatus: @BriskGetFPCHeapStatus;
  );

{ --- public helpers ---------------------------------------------------------- }

function BriskVersion: AnsiString;
begin
  Result := AnsiString(brisk_version);
end;

function BriskOwns(P: Pointer): Boolean;
begin
  Result := (P <> nil) and (brisk_owns(P) <> 0);
end;

procedure BriskCollect;
begin
  brisk_collect;
end;

function BriskMemoryInfo: TBriskMemoryInfo;
begin
  Result := CurrentInfo;
end;

function BriskIsInstalled: Boolean;
begin
  Result := Installed;
end;

{ --- installation -------------------------------------------------------------- }

var
  PreviousManager: TMemoryManager;

procedure NotFirst(const Reason: ShortString);
begin
  Writeln(StdErr, 'BriskMM: ', Reason);
  Writeln(StdErr, 'BriskMM: BriskMM must be the first unit in the program''s uses clause ',
    '(before cthreads too), and the program must not be built with -gh (heaptrc).');
  Writeln(StdErr, 'BriskMM: the program stops here, before anything was mixed between memory managers.');
  Flush(StdErr);
  Halt(BriskExitNotFirst);
end;

initialization
  GetMemoryManager(PreviousManager);
  if IsMemoryManagerSet then
    NotFirst('another memory manager (heaptrc, cmem, ...) was installed before BriskMM.');
  { The default heap's status is per thread; at this point only the main
    thread exists, and every unit initialised so far ran in it. }
  if GetFPCHeapStatus.CurrHeapUsed <> 0 then
    NotFirst('units initialised before BriskMM have already allocated memory from the default heap.');
  SetMemoryManager(BriskMemoryManager);
  Installed := True;

finalization
  { Blocks still alive (threads not yet ended, globals of units finalised
    after this one) must keep reaching brisk, so the manager stays installed:
    the RTL's heap finalisation and libc's exit code never call into it. }
end.
