/**
 * The Bedrock runtime client and the Converse command, in a module of their own so that `bedrockConverse`
 * (shared/ai/bedrock.ts) imports them with the first model call, not at cold start (the document refresh
 * worker runs the built-in writer unless BEDROCK_MODEL_ID is set).
 */
export { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
