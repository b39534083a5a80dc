import { join } from 'node:path';
import { inject } from 'vitest';

// Test workers talk HTTP to the local stack, and reach DynamoDB Local directly only for operator commands.
Object.assign(process.env, {
  TABLE_NAME: inject('tableName'),
  DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
  ISSUER_URL: inject('issuerUrl'),
  ISSUER_KEY_FILE: join(inject('dataDir'), 'issuer-key.json'),
  AWS_REGION: 'us-east-1',
});
