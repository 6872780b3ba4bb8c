function readOnly(part: string): never {
  throw new TypeError(`req.auth.resource is read-only (it is shared by every request): copy it to change its ${part}`);
}

/** Query parameters that cannot change: the URL they belong to is read-only. */
class ReadonlySearchParams extends URLSearchParams {
  override append(): void {
    readOnly('searchParams');
  }
  override delete(): void {
    readOnly('searchParams');
  }
  override set(): void {
    readOnly('searchParams');
  }
  override sort(): void {
    readOnly('searchParams');
  }
}

/**
 * A URL whose parts cannot be changed, so one instance serves as `req.auth.resource` for every
 * request: parsing the resource URL per request would add about a quarter to a cache hit's time
 * in the server (what bench case 1b measures). It is a `URL` (`instanceof`, `href`, `toString`, JSON); every setter
 * throws a `TypeError`, and so do the mutators of its `searchParams`. `new URL(resource)` gives
 * a copy to change.
 */
export class ReadonlyUrl extends URL {
  constructor(url: string) {
    super(url);
    const searchParams = new ReadonlySearchParams(this.search);
    Object.defineProperty(this, 'searchParams', { value: searchParams, enumerable: false });
    Object.freeze(this);
  }
}

// The parts' own getters, with setters that throw (declared here rather than in the class: the
// URL type declares the parts as plain properties, which a class cannot override with accessors).
for (const part of ['href', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'] as const) {
  const inherited = Object.getOwnPropertyDescriptor(URL.prototype, part)!;
  Object.defineProperty(ReadonlyUrl.prototype, part, {
    get: inherited.get,
    set() {
      readOnly(part);
    },
    enumerable: inherited.enumerable ?? false,
    configurable: true,
  });
}
