/**
 * The SQS client and the one command the sender uses, in a module of their own so that `sqsSender`
 * (shared/queue/queue.ts) imports them on its first send, not at cold start: a dynamic import of the SDK
 * package itself would keep every one of its commands.
 */
export { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
