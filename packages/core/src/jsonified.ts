/**
 * What a value of type `T` comes back as from JSON (`JSON.parse(JSON.stringify(value))`), as a
 * durable step's result does (`ctx.step`, issue 40): a `Date` (anything with `toJSON`) becomes
 * what its `toJSON` gives (a string), `undefined` properties and function properties are left
 * out, a missing result (`undefined`, `void`) is `null`. Values JSON would not give back
 * (`Map`, `Set`, `bigint`, a function, a symbol, `undefined` in an array) are `never`: the
 * worker refuses them at run time (`step-result-not-json`, decision 72). `unknown` and `any`
 * stay as they are.
 * @example type R = Jsonified<{ at: Date; note?: string }>; // { at: string; note?: string }
 */
export type Jsonified<T> = unknown extends T
  ? T
  : // eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a `fn` that returns nothing
    T extends undefined | void
    ? null
    : JsonData<T>;

type Fn = (...args: never[]) => unknown;

/** `T` inside a result: an `undefined` there is not turned into `null`. */
type JsonData<T> = unknown extends T
  ? T
  : T extends { toJSON(...args: never[]): infer J }
    ? JsonData<J>
    : T extends string | number | boolean | null
      ? T
      : // eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- as in `Jsonified`
        T extends undefined | void | bigint | symbol | Fn
        ? never
        : T extends
              | ReadonlyMap<unknown, unknown>
              | ReadonlySet<unknown>
              | WeakMap<object, unknown>
              | WeakSet<object>
          ? never
          : T extends readonly unknown[]
            ? { -readonly [K in keyof T]: JsonData<T[K]> }
            : T extends object
              ? JsonObject<T>
              : never;

/** The keys whose value may be `undefined`: JSON leaves them out when it is. */
type MaybeMissing<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/** An object's properties as JSON gives them back (one flat type, not an intersection). */
type JsonObject<T> = Flat<
  {
    [K in Exclude<keyof T, MaybeMissing<T> | symbol> as Dropped<T[K], K>]: JsonData<T[K]>;
  } & {
    [K in Exclude<MaybeMissing<T>, symbol> as Dropped<Exclude<T[K], undefined>, K>]?: JsonData<
      Exclude<T[K], undefined>
    >;
  }
>;

/** `K`, unless its value never comes back from JSON (a function, `undefined`). */
type Dropped<V, K> = [JsonData<V>] extends [never] ? never : K;

type Flat<T> = { [K in keyof T]: T[K] } & {};
