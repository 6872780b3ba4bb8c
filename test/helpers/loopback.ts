/** Where a native client's loopback redirect lands (RFC 8252 §7.3): the headless user agent stops there. */
export const isLoopbackCallback = (url: URL) => url.hostname === '127.0.0.1' && url.pathname === '/callback';
