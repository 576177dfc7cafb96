// The native engine's failures, each with a kind the UI can act on and a message that says what to do.

export type NativeErrorKind =
  | 'no-python'
  | 'no-torch'
  | 'no-distributed'
  | 'cuda'
  | 'nccl'
  | 'rank-died'
  | 'watchdog'
  | 'cancelled'
  | 'harness'
  | 'bad-output'
  | 'launch';

export class NativeRunError extends Error {
  constructor(
    readonly kind: NativeErrorKind,
    message: string,
    readonly details: {
      readonly rank?: number;
      readonly exitCode?: number | null;
      readonly signal?: string | null;
      readonly stderrTail?: string;
    } = {},
  ) {
    super(message);
    this.name = 'NativeRunError';
  }
}

/** Reads a failing rank's stderr for the causes people meet most, so the error names the cause, not the symptom. */
export function classifyFailure(stderr: string): { kind: NativeErrorKind; hint: string } | undefined {
  if (
    /torch\.distributed\.(?:elastic|run)[\s\S]*AttributeError: 'NoneType' object has no attribute 'get'/.test(stderr)
  ) {
    return {
      kind: 'launch',
      hint: "this torchrun (Debian's torch 1.13 under Python 3.11) crashes in its elastic agent; use --launcher direct",
    };
  }
  if (/No module named ['"]?torch/.test(stderr))
    return { kind: 'no-torch', hint: 'torch is not installed for this Python; install it or pick another interpreter' };
  if (/NCCL error|ncclInternalError|ncclSystemError|ncclUnhandledCudaError|NCCL WARN/.test(stderr))
    return { kind: 'nccl', hint: 'NCCL failed; rerun with NCCL_DEBUG=INFO to see why' };
  if (/CUDA error|CUDA out of memory|cudaError|no CUDA GPUs are available/i.test(stderr))
    return { kind: 'cuda', hint: 'a CUDA error; check the GPUs with nvidia-smi and CUDA_VISIBLE_DEVICES' };
  return undefined;
}

/** The last lines of a stream, for error messages. */
export function tail(text: string, lines = 15): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
