// Entry point of dist/cli-worker.js: a worker thread of the CLI's pool (pool.ts). It runs the tasks the main
// thread posts, one at a time, and answers each with its result or its error; the pool terminates it when done.
import { parentPort } from 'node:worker_threads';
import { runTask, SystemCache } from './tasks';
import type { WorkerReply, WorkerRequest } from './protocol';

const port = parentPort;
if (!port) throw new Error('cli-worker.js runs as a worker thread of the CLI, not on its own');
const systems = new SystemCache();
port.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    reply = { index: request.index, ok: true, result: runTask(request.task, systems) };
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    reply = { index: request.index, ok: false, name: e.name, message: e.message };
  }
  port.postMessage(reply);
});
