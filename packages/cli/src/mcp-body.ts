import { ERR, McpAuthError } from '@mcp-auth-kit/client';

/** The deadline of an SSE answer to a POST (`ms`, from its start), and the open answers' ways to set a new one from now. */
export interface StreamDeadlines {
  ms: number;
  open: Set<(ms: number) => void>;
}

export function isEventStream(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
}

/**
 * `res` whose body, when reading it fails, first tells `onError` why; with a `deadline`, a body
 * not complete by `deadline.sse.ms` fails with SERVER_UNREACHABLE. While the body is open,
 * `deadline.sse.open` holds a function that sets a new deadline from now (the server waits for the user).
 */
export function observeBody(
  res: Response,
  deadline: { sse: StreamDeadlines; origin: string } | undefined,
  onError: (err: unknown) => void,
): Response {
  if (!res.body) return res;
  const reader = res.body.getReader();
  let timer: NodeJS.Timeout | undefined;
  let late: McpAuthError | undefined;
  const arm = (ms: number) => {
    clearTimeout(timer);
    const seconds = Math.round(ms / 100) / 10;
    timer = setTimeout(() => {
      late = new McpAuthError(
        ERR.SERVER_UNREACHABLE,
        `the MCP server at ${deadline?.origin} did not answer in time (no complete answer within ${seconds} s)`,
      );
      void reader.cancel(late).catch(() => undefined);
    }, ms);
    timer.unref?.();
  };
  const settle = () => {
    clearTimeout(timer);
    deadline?.sse.open.delete(arm);
  };
  if (deadline) {
    arm(deadline.sse.ms);
    deadline.sse.open.add(arm);
  }
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (late) throw late;
        if (chunk.done) {
          settle();
          controller.close();
        } else controller.enqueue(chunk.value);
      } catch (err) {
        settle();
        onError(late ?? err);
        controller.error(late ?? err);
      }
    },
    cancel: (reason) => {
      settle();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
