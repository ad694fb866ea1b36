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
  pointer given to FreeMem, FreeMemSize, ReAllocMem or MemSize is checked
  (by brisk_binding_free, or with brisk_owns); a pointer brisk did not
  allocate gives a message on stderr and runtime error 204 (EInvalidPointer
  when SysUtils is used) instead of memory corruption.

  Order with cthreads: "BriskMM, cthreads", in that order. BriskMM needs no
  thread manager (brisk keeps its per-thread state, the count of used bytes
  included, in C thread-local storage), while cthreads brings in
  the unit "unix", whose initialisation allocates (it reads the time zone
  file); "cthreads, BriskMM" is therefore reported as not first.

  Heap status: GetHeapStatus and GetFPCHeapStatus report real, process-wide
  figures (the RTL's default heap reports the calling thread's heap only).
  Sizes come from brisk_memory_info_get (committed = memory brisk holds from
  the OS). CurrHeapUsed is the sum of MemSize of the live blocks, which brisk
  counts itself, per thread, in the brisk_binding_* calls this unit makes
  (brisk_binding_bytes_in_use sums them): exact whenever no other thread is
  allocating or freeing at that moment. MaxHeapUsed is the largest
  CurrHeapUsed that any status call has seen, a lower bound of the true peak
  (MaxHeapSize, the peak of committed memory, bounds it from above): keeping
  the true peak would cost a shared write on every GetMem. A program that
  wants the peak of a phase asks for the status when it holds the most.

  Cost per call: GetMem and FreeMem are one call into brisk each
  (brisk_binding_malloc, brisk_binding_free), which allocates or frees, checks
  that brisk owns the pointer and keeps the count, all in C. The unit itself
  keeps no per-thread state: FPC thread variables go through a relocation
  call on every access, which cost more than brisk's whole fast path. }
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
{ The entry points for bindings: allocate, free or resize and keep brisk's
  count of bytes in live blocks, in one call each. brisk_binding_free
  returns the usable size it freed, or 0 (freeing nothing) when brisk does
  not own the pointer. }
function brisk_binding_malloc(Size: PtrUInt; out Usable: PtrUInt): Pointer; cdecl;
  BRISK_EXTERNAL 'brisk_binding_malloc';
function brisk_binding_free(Block: Pointer): PtrUInt; cdecl; BRISK_EXTERNAL 'brisk_binding_free';
function brisk_binding_realloc(Block: Pointer; Size: PtrUInt; out Usable: PtrUInt): Pointer; cdecl;
  BRISK_EXTERNAL 'brisk_binding_realloc';
function brisk_binding_bytes_in_use: PtrUInt; cdecl; BRISK_EXTERNAL 'brisk_binding_bytes_in_use';
function brisk_usable_size(Block: Pointer): PtrUInt; cdecl; BRISK_EXTERNAL 'brisk_usable_size';
function brisk_owns(Block: Pointer): LongInt; cdecl; BRISK_EXTERNAL 'brisk_owns';
procedure brisk_collect; cdecl; BRISK_EXTERNAL 'brisk_collect';
function brisk_memory_info_get(var Info: TBriskMemoryInfo): LongInt; cdecl; BRISK_EXTERNAL 'brisk_memory_info_get';

var
  { The largest CurrHeapUsed a status call has seen (see the unit's header).
    Int64 so that InterlockedCompareExchange64 applies; 64-bit targets only. }
  PeakUsedSeen: Int64 = 0;
  Installed: Boolean = False;

{ Raises PeakUsedSeen to Used unless another thread already saw more. }
procedure NotePeak(Used: Int64);
var
  Peak: Int64;
begin
  Peak := PeakUsedSeen;
  while Used > Peak do
  begin
    if InterlockedCompareExchange64(PeakUsedSeen, Used, Peak) = Peak then
      Break;
    Peak := PeakUsedSeen;
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
var
  Usable: PtrUInt;
begin
  { GetMem(0) returns a real block in FPC (the default heap allocates one
    byte), so that FreeMem and MemSize work on it like on any other. }
  if Size = 0 then
    Size := 1;
  Result := brisk_binding_malloc(Size, Usable);
  if Result = nil then
    Result := OutOfMemory;
end;

function BriskFreeMem(P: Pointer): PtrUInt;
begin
  if P = nil then
    Exit(0);
  Result := brisk_binding_free(P);
  if Result = 0 then   { every block brisk hands out has a usable size > 0 }
    ForeignPointer('FreeMem', P);
end;

{ FreeMem(P, Size), the TP7 form. As in the RTL's default heap a Size of 0
  frees nothing; otherwise Size must not exceed the block (cmem checks it the
  same way), which catches a pointer freed with another block's size. Rare,
  so it checks before it frees, in separate calls. }
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
  Result := brisk_binding_free(P);
end;

{ The RTL's AllocMem zeroes the Size bytes asked for, as the default heap
  does; brisk_calloc is not used because its blocks would escape the count
  that the brisk_binding_* calls keep. }
function BriskAllocMem(Size: PtrUInt): Pointer;
var
  Usable: PtrUInt;
begin
  if Size = 0 then
    Size := 1;
  Result := brisk_binding_malloc(Size, Usable);
  if Result = nil then
    Exit(OutOfMemory);
  FillChar(Result^, Size, 0);
end;

const
  { Blocks up to this size are not moved by a ReAllocMem that shrinks them. }
  ShrinkInPlaceMax = 512;

{ ReAllocMem(P, 0) frees P and sets it to nil; ReAllocMem(nil, N) allocates.
  On failure P is left as it was (still valid) and nil is returned when
  ReturnNilIfGrowHeapFails is set, runtime error 203 otherwise. }
function BriskReAllocMem(var P: Pointer; Size: PtrUInt): Pointer;
var
  NewP: Pointer;
  Usable: PtrUInt;
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
  { brisk_binding_realloc reads the old block's size from its page, so a
    foreign pointer must be caught before. }
  if brisk_owns(P) = 0 then
    ForeignPointer('ReAllocMem', P);
  { A block that still holds Size bytes stays where it is when brisk would
    keep it too (at least half used), and always when it is small: the
    RTL's default heap never moves a block of up to 544 bytes that shrinks,
    and cmem (glibc) shrinks in place as well. This matters for strings:
    SetLength on a string it owns alone calls ReAllocMem only to shrink it
    to half or less (ReadLn does so for every line shorter than about 120
    characters), and brisk_realloc moves such a block, a malloc, copy and
    free per line. What a small block keeps is at most ShrinkInPlaceMax
    bytes, as with the default heap. }
  Usable := brisk_usable_size(P);
  if (Size <= Usable) and ((Usable <= ShrinkInPlaceMax) or (Size >= Usable div 2)) then
    Exit(P);
  NewP := brisk_binding_realloc(P, Size, Usable);
  if NewP = nil then
    Exit(OutOfMemory);
  P := NewP;
  Result := NewP;
end;

{ Called by the RTL's ansistring SetLength on every resize of a string it
  owns alone, so it is warm too: two cheap calls. }
function BriskMemSize(P: Pointer): PtrUInt;
begin
  if P = nil then
    Exit(0);
  if brisk_owns(P) = 0 then
    ForeignPointer('MemSize', P);
  Result := brisk_usable_size(P);
end;

{ brisk sets a thread up on its first call and hands its caches back from
  its own thread-exit hook, so there is nothing to do here. The entries are
  set anyway because units that hook thread exit (GetMemoryManager, replace
  DoneThread, call the previous one) expect a procedure to chain to. }
procedure BriskInitThread;
begin
end;

procedure BriskDoneThread;
begin
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
  Used := brisk_binding_bytes_in_use;
  NotePeak(Used);
  Info := CurrentInfo;
  Result.CurrHeapSize := Info.Committed;
  Result.MaxHeapSize := Info.CommittedPeak;
  Result.CurrHeapUsed := Used;
  Result.MaxHeapUsed := PeakUsedSeen;
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
