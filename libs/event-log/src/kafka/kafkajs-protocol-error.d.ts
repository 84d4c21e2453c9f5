/** kafkajs's table of Kafka's protocol errors, which its package types do not declare. */
declare module 'kafkajs/src/protocol/error' {
  export const errorCodes: readonly {
    readonly type: string;
    readonly code: number;
    readonly retriable: boolean;
    readonly message: string;
  }[];
}
