// Preloaded into a cold CLI process by bench/scale.bench.ts: reports the process's peak resident memory on exit,
// so the benchmark measures memory as the user's process sees it rather than the parent's.
// Linux keeps getrusage's maxRSS across execve, so a child spawned by a bench process that has grown (the in-process
// engine benchmarks run first in a whole `npm run bench`) reports the parent's peak (190 MB where the CLI's own is
// 67 MB). /proc/self/status's VmHWM belongs to the address space exec created, so it is read first.
const { readFileSync } = require('node:fs');

function peakKB() {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Number(hwm[1]);
  } catch {
    // Not Linux: getrusage's figure is the process's own where exec does not carry it over.
  }
  return process.resourceUsage().maxRSS;
}

process.on('exit', () => {
  process.stderr.write(`\npeak-rss-kB ${peakKB()}\n`);
});
