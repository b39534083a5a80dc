import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#shared/routes/index.ts';
import { build, functionsByDescription, mergedTemplate, type Json } from './stack.fixture.ts';

/**
 * Contract section 17: API Gateway refuses a token without the route's scope before any function runs. In the
 * synthesized template every JWT route of the route table has authorization scopes, its row's, and its function
 * knows the same scope (ROUTE_SCOPE) for its own check; public routes have none.
 */
describe('authorization scopes in the synthesized template', () => {
  let template: Template;
  beforeAll(() => {
    template = mergedTemplate(build({ routes }).stack);
  });

  it('puts every JWT route`s scope in its authorizationScopes and its function`s ROUTE_SCOPE', () => {
    const apiRoutes = Object.values<Json>(template.findResources('AWS::ApiGatewayV2::Route'));
    const fns = functionsByDescription(template);
    expect(apiRoutes).toHaveLength(routes.length);
    for (const r of apiRoutes) {
      const p = r.Properties;
      const row = routes.find((x) => `${x.method} ${x.path}` === p.RouteKey)!;
      const env = fns.get(p.RouteKey)!.props.Environment.Variables;
      if (p.AuthorizationType === 'JWT') {
        expect(p.AuthorizationScopes, `${p.RouteKey} has no authorization scopes`).toEqual([expect.any(String)]);
        expect(p.AuthorizationScopes).toEqual([row.scope]);
        expect(env.ROUTE_SCOPE, p.RouteKey).toBe(row.scope);
      } else if (row.door === 'mcp') {
        // no gateway authorizer (POST /mcp: shared/mcp/token.ts checks the token): the function checks the scope
        expect(p.AuthorizationScopes, p.RouteKey).toBeUndefined();
        expect(env.ROUTE_SCOPE, p.RouteKey).toBe(row.scope);
      } else {
        expect(row.auth, p.RouteKey).toBe('public');
        expect(p.AuthorizationScopes, p.RouteKey).toBeUndefined();
      }
    }
    expect(apiRoutes.filter((r) => r.Properties.AuthorizationType === 'JWT')).toHaveLength(
      routes.filter((r) => r.auth === 'jwt' && r.door !== 'mcp').length,
    );
  });

  it('meters the token endpoint against the limiter and lets it sign', () => {
    const env = functionsByDescription(template).get('POST /oauth/token')!.props.Environment.Variables;
    expect(env).toHaveProperty('TENANT_RATE_LIMIT_RPS');
    expect(env).not.toHaveProperty('ROUTE_SCOPE');
  });
});
