/** One request as the balancer forwarded it (headers and body as received). */
export interface Forwarded {
  target: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  status: number;
}

export interface RoundRobinProxy {
  /** `http://localhost:<port>` */
  url: string;
  port: number;
  /** Backend base URLs (`http://127.0.0.1:<port>`); may be set after the proxy listens. */
  targets: string[];
  /** Requests answered by each target. */
  served: number[];
  log: Forwarded[];
  close(): Promise<void>;
}

export function startRoundRobinProxy(options?: { port?: number; host?: string; targets?: string[] }): Promise<RoundRobinProxy>;
export function parseRoutes(text: string): Array<{ port: number; targets: string[] }>;
