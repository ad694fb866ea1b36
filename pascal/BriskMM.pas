{ SPDX-License-Identifier: MIT }
{ BriskMM: the brisk allocator as the memory manager of a Free Pascal or
  Delphi program.

  Adoption is one line: put BriskMM first in the program's uses clause.

    program MyApp;
    uses
      BriskMM, cthreads, Classes, SysUtils;    // Free Pascal on Linux
      BriskMM, Classes, SysUtils;              // Free Pascal on Windows, Delphi

  Free Pascal, Linux: compile with the folder holding libbrisk.a on the
  library path:

    fpc -Fu<brisk>/pascal -Fl<brisk>/build MyApp.pas

  The result is one executable: libbrisk.a is linked in statically, nothing is
  deployed beside it. Define BRISK_SHARED (fpc -dBRISK_SHARED) to link
  libbrisk.so.0 instead; the program then needs that library at run time.

  Free Pascal, Win64: the same, with libbrisk.a of the Windows build (which
  carries the import entries of the Windows functions brisk calls, so that
  no MinGW library is needed), or -dBRISK_SHARED to import brisk.dll.

  Delphi (Win64): the unit imports brisk.dll; see "Delphi" below.

  Why first: a memory manager can only free what it allocated. Every unit
  initialised before BriskMM allocates from the manager that was active then,
  and those blocks would later reach brisk. Under Free Pascal BriskMM
  therefore checks, when it initialises, that no other manager is installed
  (heaptrc from -gh, cmem, ...) and that the RTL's default heap has not
  handed out a block yet (on Windows: none besides the command-line
  arguments, which the system unit keeps there for ParamStr). If either is
  false it writes what to do on stderr and ends the program with exit code 3,
  before installing itself, so nothing has been mixed. At run time every
  pointer given to FreeMem, FreeMemSize, ReAllocMem or MemSize is checked
  (by brisk, before it touches the block); a pointer brisk did not
  allocate gives a message on stderr and runtime error 204 (EInvalidPointer
  when SysUtils is used) instead of memory corruption.

  Order with cthreads (Unix): "BriskMM, cthreads", in that order. BriskMM
  needs no thread manager (brisk keeps its per-thread state, the count of
  used bytes included, in its own thread-local storage), while cthreads
  brings in the unit "unix", whose initialisation allocates (it reads the
  time zone file); "cthreads, BriskMM" is therefore reported as not first.
  On Windows threads need no extra unit.

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

  Cost per call: under Free Pascal the memory manager's entries are brisk's
  own C functions (brisk_binding_getmem, brisk_binding_freemem, ...), which
  allocate or free, check that brisk owns the pointer and keep the count:
  one call from the RTL into brisk, with no Pascal function between (what
  that saves: pascal/README.md). Only errors come back into the unit, to be
  raised the RTL's way. The unit itself keeps no per-thread state: FPC
  thread variables go through a relocation call on every access, which cost
  more than brisk's whole fast path.

  Delphi: the unit installs brisk with SetMemoryManager and Delphi's
  TMemoryManagerEx (GetMem, FreeMem, ReallocMem, AllocMem,
  RegisterExpectedMemoryLeak, UnregisterExpectedMemoryLeak), importing
  brisk.dll (deploy it beside the program). Delphi's RTL deals with
  GetMem(0), FreeMem(nil), ReallocMem(nil, N) and ReallocMem(P, 0) before it
  calls a manager, and raises EOutOfMemory or EInvalidPointer from the
  results. Delphi's RTL may allocate before the first unit of a program, so
  instead of refusing to start, BriskMM hands a pointer that brisk did not
  allocate to the manager that was installed before it (Delphi's own), which
  frees it or reports it as invalid. brisk keeps no list of expected leaks:
  RegisterExpectedMemoryLeak and UnregisterExpectedMemoryLeak return False,
  and Delphi's GetHeapStatus and GetMemoryManagerState describe Delphi's
  own manager, not brisk (use BriskMemoryInfo). The Delphi part has not been
  compiled: no Delphi compiler was available to the developers; it follows
  Delphi's documented System unit. }
unit BriskMM;

{$IFDEF FPC}
{$mode objfpc}
{$implicitexceptions off}
{$inline on}
{$S-}
{$ENDIF}
{ The memory manager runs underneath every check the user may have turned on
  for the program (-Cr, -Co, -Ct, -Ci); none of them may fire in here. }
{$R-}{$Q-}{$I-}

interface

const
  { Exit code when BriskMM finds at initialisation that it is not first. }
  BriskExitNotFirst = 3;
  { Exit code when brisk cannot set itself up (Windows: no TLS index left). }
  BriskExitInitFailed = 4;

type
  { Mirror of brisk_memory_info in include/brisk.h. }
  TBriskMemoryInfo = record
    StructSize: NativeUInt;     { set by the caller to SizeOf(TBriskMemoryInfo) }
    Mapped: NativeUInt;         { address space currently mapped from the OS }
    MappedPeak: NativeUInt;
    Committed: NativeUInt;      { mapped minus purged: an upper bound on resident }
    CommittedPeak: NativeUInt;
    LargeInUse: NativeUInt;     { bytes in live blocks served directly by the OS }
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

{$IF DEFINED(FPC) AND NOT (DEFINED(CPUX86_64) OR DEFINED(CPUI386))}
  {$FATAL BriskMM puts brisk's C functions in the memory manager record, which needs x86-64 or i386 (see brisk_binding_getmem below)}
{$IFEND}

type
  { brisk_binding_error_handler in include/brisk.h. }
  TBriskErrorHandler = function(Error: LongInt; P: Pointer; Size: NativeUInt): Pointer; cdecl;

const
  { enum brisk_binding_error in include/brisk.h }
  BriskOutOfMemory = 1;
  BriskForeignFreeMem = 2;
  BriskForeignFreeMemSize = 3;
  BriskForeignReAllocMem = 4;
  BriskForeignMemSize = 5;
  BriskSizePastBlock = 6;

{$IFDEF MSWINDOWS}
  BriskLibName = 'brisk.dll';
{$ELSE}
  BriskLibName = 'brisk';   { libbrisk.so(.0), found by the dynamic loader }
{$ENDIF}

{ The entry points for bindings: allocate, free or resize and keep brisk's
  count of bytes in live blocks, in one call each. brisk_binding_free
  returns the usable size it freed, or 0 (freeing nothing) when brisk does
  not own the pointer (Delphi's manager). Free Pascal's record holds the
  brisk_binding_getmem family itself, whose errors go to BindingError;
  Delphi's manager allocates with brisk_binding_getmem and
  brisk_binding_allocmem too, with no handler set (nil when out of memory).
  brisk_binding_init sets brisk up (on Windows its thread-local slots, its
  thread-exit callback; everywhere the options and the stack traces of the
  diagnostic modes): a program linked by Free Pascal or Delphi runs no C
  constructors (Free Pascal's start-up code on Linux does not run the
  linked objects' .init_array either), so the binding calls it, before the
  first allocation. It returns 0 when brisk cannot work. On Windows such a
  program runs no C destructors either: brisk_binding_done writes the
  reports of brisk's diagnostic modes at the end instead. On Linux the C
  library runs brisk's destructor at exit, after every unit's finalization.

  The same declarations appear twice: once for a shared library (Delphi
  always, Free Pascal with BRISK_SHARED) and once for the static library. }
{$IF DEFINED(BRISK_SHARED) OR NOT DEFINED(FPC)}
function brisk_version: PAnsiChar; cdecl; external BriskLibName name 'brisk_version';
function brisk_binding_free(Block: Pointer): NativeUInt; cdecl;
  external BriskLibName name 'brisk_binding_free';
function brisk_binding_realloc(Block: Pointer; Size: NativeUInt; out Usable: NativeUInt): Pointer; cdecl;
  external BriskLibName name 'brisk_binding_realloc';
function brisk_binding_bytes_in_use: NativeUInt; cdecl;
  external BriskLibName name 'brisk_binding_bytes_in_use';
{ The memory manager's entries (see the record below) carry the record's own
  calling convention, the compiler's default: on x86-64 every Free Pascal
  convention is the platform's C one (System V on Linux, Microsoft x64 on
  Windows), and Delphi has only the latter on Win64; on i386 it is
  "register", which brisk.h gives these entries there (BRISK_BINDING_CALL:
  GCC's regparm(3), the same three registers in the same order). }
procedure brisk_binding_set_error_handler(Handler: TBriskErrorHandler); cdecl;
  external BriskLibName name 'brisk_binding_set_error_handler';
function brisk_binding_getmem(Size: PtrUInt): Pointer;
  external BriskLibName name 'brisk_binding_getmem';
function brisk_binding_freemem(P: Pointer): PtrUInt;
  external BriskLibName name 'brisk_binding_freemem';
function brisk_binding_freemem_size(P: Pointer; Size: PtrUInt): PtrUInt;
  external BriskLibName name 'brisk_binding_freemem_size';
function brisk_binding_allocmem(Size: PtrUInt): Pointer;
  external BriskLibName name 'brisk_binding_allocmem';
function brisk_binding_reallocmem(var P: Pointer; Size: PtrUInt): Pointer;
  external BriskLibName name 'brisk_binding_reallocmem';
function brisk_binding_memsize(P: Pointer): PtrUInt;
  external BriskLibName name 'brisk_binding_memsize';
function brisk_usable_size(Block: Pointer): NativeUInt; cdecl; external BriskLibName name 'brisk_usable_size';
function brisk_owns(Block: Pointer): LongInt; cdecl; external BriskLibName name 'brisk_owns';
procedure brisk_collect; cdecl; external BriskLibName name 'brisk_collect';
function brisk_memory_info_get(var Info: TBriskMemoryInfo): LongInt; cdecl;
  external BriskLibName name 'brisk_memory_info_get';
function brisk_binding_init: LongInt; cdecl; external BriskLibName name 'brisk_binding_init';
function brisk_binding_traces: LongInt; cdecl; external BriskLibName name 'brisk_binding_traces';
procedure brisk_binding_message(Text: PAnsiChar); cdecl; external BriskLibName name 'brisk_binding_message';
procedure brisk_binding_trace_block(Block, Frame: Pointer); cdecl;
  external BriskLibName name 'brisk_binding_trace_block';
{$IFDEF MSWINDOWS}
procedure brisk_binding_done; cdecl; external BriskLibName name 'brisk_binding_done';
{$ENDIF}
{$ELSE}
{$IFDEF MSWINDOWS}
  { The Windows libbrisk.a holds, besides brisk's objects, the import entries
    of the few Windows functions it calls (kernel32, msvcrt), so that Free
    Pascal's linker needs no MinGW import library. }
  {$LINKLIB libbrisk.a}
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
  {$IFDEF CPUI386}
  { 32-bit x86: brisk's 64-bit arithmetic calls libgcc's helpers (gcc's
    32-bit libgcc.a, from gcc-multilib, on the library path). }
  {$LINKLIB gcc}
  {$ENDIF}
{$ENDIF}
const
  { C's names in an object file have an underscore in front on 32-bit
    Windows: Free Pascal adds it to a cdecl function's external name, not
    to the others' (the memory manager's entries, in its own convention). }
{$IF DEFINED(MSWINDOWS) AND DEFINED(CPUI386)}
  BriskSymbolPrefix = '_';
{$ELSE}
  BriskSymbolPrefix = '';
{$IFEND}
function brisk_version: PAnsiChar; cdecl; external name 'brisk_version';
function brisk_binding_free(Block: Pointer): NativeUInt; cdecl; external name 'brisk_binding_free';
function brisk_binding_realloc(Block: Pointer; Size: NativeUInt; out Usable: NativeUInt): Pointer; cdecl;
  external name 'brisk_binding_realloc';
function brisk_binding_bytes_in_use: NativeUInt; cdecl; external name 'brisk_binding_bytes_in_use';
procedure brisk_binding_set_error_handler(Handler: TBriskErrorHandler); cdecl;
  external name 'brisk_binding_set_error_handler';
function brisk_binding_getmem(Size: PtrUInt): Pointer;
  external name BriskSymbolPrefix + 'brisk_binding_getmem';
function brisk_binding_freemem(P: Pointer): PtrUInt;
  external name BriskSymbolPrefix + 'brisk_binding_freemem';
function brisk_binding_freemem_size(P: Pointer; Size: PtrUInt): PtrUInt;
  external name BriskSymbolPrefix + 'brisk_binding_freemem_size';
function brisk_binding_allocmem(Size: PtrUInt): Pointer;
  external name BriskSymbolPrefix + 'brisk_binding_allocmem';
function brisk_binding_reallocmem(var P: Pointer; Size: PtrUInt): Pointer;
  external name BriskSymbolPrefix + 'brisk_binding_reallocmem';
function brisk_binding_memsize(P: Pointer): PtrUInt;
  external name BriskSymbolPrefix + 'brisk_binding_memsize';
function brisk_usable_size(Block: Pointer): NativeUInt; cdecl; external name 'brisk_usable_size';
function brisk_owns(Block: Pointer): LongInt; cdecl; external name 'brisk_owns';
procedure brisk_collect; cdecl; external name 'brisk_collect';
function brisk_memory_info_get(var Info: TBriskMemoryInfo): LongInt; cdecl; external name 'brisk_memory_info_get';
function brisk_binding_init: LongInt; cdecl; external name 'brisk_binding_init';
function brisk_binding_traces: LongInt; cdecl; external name 'brisk_binding_traces';
procedure brisk_binding_message(Text: PAnsiChar); cdecl; external name 'brisk_binding_message';
procedure brisk_binding_trace_block(Block, Frame: Pointer); cdecl; external name 'brisk_binding_trace_block';
{$IFDEF MSWINDOWS}
procedure brisk_binding_done; cdecl; external name 'brisk_binding_done';
{$ENDIF}
{$IFEND}

{ --- shared by the Free Pascal and Delphi managers ---------------------------- }

var
  Installed: Boolean = False;

{ HexStr without the RTL of either compiler: this runs inside the manager. }
function PointerHex(P: Pointer): ShortString;
const
  Digits: array[0..15] of AnsiChar = '0123456789ABCDEF';
var
  Value: NativeUInt;
  I: Integer;
begin
  Value := NativeUInt(P);
  SetLength(Result, 2 * SizeOf(Pointer));
  for I := 2 * SizeOf(Pointer) downto 1 do
  begin
    Result[I] := Digits[Value and 15];
    Value := Value shr 4;
  end;
end;

{ Writes one line where brisk's own messages go: standard error, or for a
  program without one (a Windows GUI program) PROGRAM.brisk.log beside the
  executable, where the RTL's ErrOutput would lose it. No heap is used. }
procedure Say(const Line: ShortString);
var
  Text: array[0..257] of AnsiChar;
begin
  Move(Line[1], Text[0], Length(Line));
  Text[Length(Line)] := #10;
  Text[Length(Line) + 1] := #0;
  brisk_binding_message(@Text[0]);
end;

function Decimal(Value: NativeUInt): ShortString;
begin
  Str(Value, Result);
end;

procedure ReportForeign(const Operation: ShortString; P: Pointer);
begin
  Say('BriskMM: ' + Operation + ' was given pointer $' + PointerHex(P) +
    ', which brisk did not allocate.');
  Say('BriskMM: memory from another memory manager (or a pointer that was never' +
    ' allocated) reached BriskMM; is BriskMM the first unit in the program''s uses clause?');
end;

function CurrentInfo: TBriskMemoryInfo;
begin
  FillChar(Result, SizeOf(Result), 0);
  Result.StructSize := SizeOf(Result);
  brisk_memory_info_get(Result);
end;

procedure NotFirst(const Reason, Rule: ShortString);
begin
  Say('BriskMM: ' + Reason);
  Say('BriskMM: BriskMM must be the first unit in the program''s uses clause' + Rule + '.');
  Say('BriskMM: the program stops here, before anything was mixed between memory managers.');
  Halt(BriskExitNotFirst);
end;

{ Sets brisk up where no C constructor does it (see brisk_binding_init). }
procedure StartBrisk;
begin
{$IF DEFINED(MSWINDOWS) OR (DEFINED(FPC) AND NOT DEFINED(BRISK_SHARED))}
  if brisk_binding_init = 0 then
  begin
    Say('BriskMM: brisk could not set itself up; the program stops before it allocates.');
    Halt(BriskExitInitFailed);
  end;
{$IFEND}
end;

{$IFDEF FPC}
{ --- Free Pascal: TMemoryManager ------------------------------------------------ }

type
  { Word-sized, so that one compare-and-swap updates it (Int64 on 64-bit
    targets, for InterlockedCompareExchange64). }
  TBriskPeak = {$IFDEF CPU64}Int64{$ELSE}PtrUInt{$ENDIF};

var
  { The largest CurrHeapUsed a status call has seen (see the unit's header). }
  PeakUsedSeen: TBriskPeak = 0;

{ Raises PeakUsedSeen to Used unless another thread already saw more. }
procedure NotePeak(Used: TBriskPeak);
var
  Peak: TBriskPeak;
begin
  Peak := PeakUsedSeen;
  while Used > Peak do
  begin
{$IFDEF CPU64}
    if InterlockedCompareExchange64(PeakUsedSeen, Used, Peak) = Peak then
{$ELSE}
    if PtrUInt(InterlockedCompareExchange(Pointer(PeakUsedSeen), Pointer(Used),
      Pointer(Peak))) = Peak then
{$ENDIF}
      Break;
    Peak := PeakUsedSeen;
  end;
end;

{ The RTL's own way to raise a runtime error from inside the heap: unlike
  RunError it goes through ErrorProc, so that with SysUtils 203 becomes
  EOutOfMemory and 204 EInvalidPointer, exactly as with the default heap. }
procedure HandleError(ErrorNumber: LongInt); external name 'FPC_HANDLEERROR';

procedure ForeignPointer(const Operation: ShortString; P: Pointer);
begin
  ReportForeign(Operation, P);
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

{ GetMem, FreeMem, FreeMemSize, AllocMem, ReAllocMem and MemSize are brisk's
  brisk_binding_* entries themselves (in the record below): no Pascal
  function stands between the RTL and brisk. They keep the RTL's contract:
  GetMem(0) returns a real block, as the default heap does; FreeMem(P, Size)
  frees nothing when Size is 0 and refuses a Size larger than the block (as
  cmem does); ReAllocMem(P, 0) frees P and sets it to nil, ReAllocMem(nil, N)
  allocates, and on failure leaves P as it was; AllocMem zeroes the Size
  bytes asked for. Their errors come here, from brisk, which holds nothing
  by then: a pointer brisk did not allocate is runtime error 204
  (EInvalidPointer with SysUtils), a lack of memory runtime error 203
  (EOutOfMemory), or nil when the program asked for it with
  ReturnNilIfGrowHeapFails. }
function BindingError(Error: LongInt; P: Pointer; Size: NativeUInt): Pointer; cdecl;
begin
  Result := nil;
  case Error of
    BriskOutOfMemory: Result := OutOfMemory;
    BriskForeignFreeMem: ForeignPointer('FreeMem', P);
    BriskForeignFreeMemSize: ForeignPointer('FreeMem(P, Size)', P);
    BriskForeignReAllocMem: ForeignPointer('ReAllocMem', P);
    BriskForeignMemSize: ForeignPointer('MemSize', P);
    BriskSizePastBlock:
      begin
        Say('BriskMM: FreeMem(P, ' + Decimal(Size) + ') on pointer $' + PointerHex(P) +
          ', a block of only ' + Decimal(brisk_usable_size(P)) + ' bytes.');
        HandleError(204);
      end;
  end;
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

function BriskGetFPCHeapStatus: TFPCHeapStatus;
var
  Info: TBriskMemoryInfo;
  Used: TBriskPeak;
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
    GetMem: @brisk_binding_getmem;
    FreeMem: @brisk_binding_freemem;
    FreeMemSize: @brisk_binding_freemem_size;
    AllocMem: @brisk_binding_allocmem;
    ReAllocMem: @brisk_binding_reallocmem;
    MemSize: @brisk_binding_memsize;
    InitThread: @BriskInitThread;
    DoneThread: @BriskDoneThread;
    RelocateHeap: nil;   { brisk's state does not live in Pascal threadvars }
    GetHeapStatus: @BriskGetHeapStatus;
    GetFPCHeapStatus: @BriskGetFPCHeapStatus;
  );

{ The same record for BRISK_LEAKS and BRISK_CHECK, which name the call site
  of each block: the C library's unwinder cannot walk Free Pascal's code (it
  has no unwind tables), so after each allocation brisk is handed the frame
  pointer of the entry below and follows the frame-pointer chain from there
  (brisk_binding_trace_block). Routines that keep no frame (the RTL's GetMem,
  code built with -O2 or more) leave no mark in that chain: their callers
  appear, and the allocating routine itself when it keeps a frame, which
  code built for debugging (-O1 or -O-, with -gl) does. Only these three
  entries allocate; the others are brisk's own. }
{$push}{$stackframes on}
function TracedGetMem(Size: PtrUInt): Pointer;
begin
  Result := brisk_binding_getmem(Size);
  brisk_binding_trace_block(Result, get_frame);
end;

function TracedAllocMem(Size: PtrUInt): Pointer;
begin
  Result := brisk_binding_allocmem(Size);
  brisk_binding_trace_block(Result, get_frame);
end;

function TracedReAllocMem(var P: Pointer; Size: PtrUInt): Pointer;
begin
  Result := brisk_binding_reallocmem(P, Size);
  brisk_binding_trace_block(Result, get_frame);
end;
{$pop}

const
  TracedMemoryManager: TMemoryManager = (
    NeedLock: False;
    GetMem: @TracedGetMem;
    FreeMem: @brisk_binding_freemem;
    FreeMemSize: @brisk_binding_freemem_size;
    AllocMem: @TracedAllocMem;
    ReAllocMem: @TracedReAllocMem;
    MemSize: @brisk_binding_memsize;
    InitThread: @BriskInitThread;
    DoneThread: @BriskDoneThread;
    RelocateHeap: nil;
    GetHeapStatus: @BriskGetHeapStatus;
    GetFPCHeapStatus: @BriskGetFPCHeapStatus;
  );

{$IFDEF MSWINDOWS}
{ What the default heap holds before any unit initialises. On Windows the
  system unit builds ParamStr's argument list there (argv and one block per
  argument, kept for the life of the program and never given to the memory
  manager). CurrHeapUsed counts each of those blocks as its MemSize plus a
  chunk header of one to three words, so this bound is never below what the
  RTL used; an allocation by another unit that fits in the slack of up to
  two words per block goes unnoticed here, and is reported as a foreign
  pointer when it is freed. }
function HeapUsedByStartup: PtrUInt;
const
  MaxChunkHeader = 3 * SizeOf(PtrUInt);
var
  I: Integer;
begin
  Result := 0;
  if argv = nil then
    Exit;
  Result := MemSize(argv) + MaxChunkHeader;
  for I := 0 to argc - 1 do
    Inc(Result, MemSize(argv[I]) + MaxChunkHeader);
end;
{$ELSE}
function HeapUsedByStartup: PtrUInt;
begin
  Result := 0;
end;
{$ENDIF}

procedure Install;
const
  Rule = {$IFDEF UNIX}' (before cthreads too)' +{$ENDIF}
    ', and the program must not be built with -gh (heaptrc)';
begin
  if IsMemoryManagerSet then
    NotFirst('another memory manager (heaptrc, cmem, ...) was installed before BriskMM.', Rule);
  { The default heap's status is per thread; at this point only the main
    thread exists, and every unit initialised so far ran in it. }
  if GetFPCHeapStatus.CurrHeapUsed > HeapUsedByStartup then
    NotFirst('units initialised before BriskMM have already allocated memory from the default heap.', Rule);
  StartBrisk;
  brisk_binding_set_error_handler(@BindingError);
  if brisk_binding_traces <> 0 then
    SetMemoryManager(TracedMemoryManager)
  else
    SetMemoryManager(BriskMemoryManager);
  Installed := True;
end;

{$ELSE}
{ --- Delphi: TMemoryManagerEx (System) -------------------------------------------- }
{ Not compiled by the developers (no Delphi compiler was available); written
  from Delphi's documented System unit, Delphi XE2 or later, Win64. }

var
  { Delphi's own manager: blocks it handed out before BriskMM went in. }
  Previous: TMemoryManagerEx;

function DelphiGetMem(Size: NativeInt): Pointer;
begin
  Result := brisk_binding_getmem(Size);   { nil: the RTL raises EOutOfMemory }
end;

function DelphiFreeMem(P: Pointer): Integer;
begin
  if brisk_binding_free(P) <> 0 then
    Result := 0
  else
    Result := Previous.FreeMem(P);   { non-zero: the RTL raises EInvalidPointer }
end;

{ A small block that shrinks, or one still at least half used, stays where
  it is (see brisk_binding_realloc); nil when out of memory, P still valid. }
function DelphiReallocMem(P: Pointer; Size: NativeInt): Pointer;
var
  Usable: NativeUInt;
begin
  if brisk_owns(P) <> 0 then
    Result := brisk_binding_realloc(P, Size, Usable)
  else
    Result := Previous.ReallocMem(P, Size);
end;

function DelphiAllocMem(Size: NativeInt): Pointer;
begin
  Result := brisk_binding_allocmem(Size);
end;

function DelphiNoLeakList(P: Pointer): Boolean;
begin
  Result := False;
end;

procedure Install;
var
  Manager: TMemoryManagerEx;
begin
  if IsMemoryManagerSet then
    NotFirst('another memory manager was installed before BriskMM.', ' (the .dpr file)');
  GetMemoryManager(Previous);
  StartBrisk;
  Manager.GetMem := DelphiGetMem;
  Manager.FreeMem := DelphiFreeMem;
  Manager.ReallocMem := DelphiReallocMem;
  Manager.AllocMem := DelphiAllocMem;
  Manager.RegisterExpectedMemoryLeak := DelphiNoLeakList;
  Manager.UnregisterExpectedMemoryLeak := DelphiNoLeakList;
  SetMemoryManager(Manager);
  Installed := True;
end;
{$ENDIF}

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

initialization
  Install;

finalization
  { Blocks still alive (threads not yet ended, globals of units finalised
    after this one) must keep reaching brisk, so the manager stays installed:
    the RTL's heap finalisation and the C runtime's exit code never call
    into it. }
{$IF DEFINED(MSWINDOWS) AND DEFINED(FPC) AND NOT DEFINED(BRISK_SHARED)}
  { Linked into the program, brisk gets no C destructor here: the reports of
    its diagnostic modes (BRISK_STATS, BRISK_LEAKS) are written now, after
    every other unit's finalization. brisk.dll writes them when it is
    unloaded at exit. }
  if Installed then
    brisk_binding_done;
{$IFEND}
end.
