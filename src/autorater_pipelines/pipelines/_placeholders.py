"""Pipeline-parameter defaults that Vertex AI Pipelines resolves at run time, shared by every pipeline."""

PROJECT_ID_PLACEHOLDER = "{{$.pipeline_google_cloud_project_id}}"
"""Resolved by Vertex AI Pipelines to the job's project (the same string as GCPC's placeholder)."""
LOCATION_PLACEHOLDER = "{{$.pipeline_google_cloud_location}}"
"""Resolved by Vertex AI Pipelines to the job's region (the same string as GCPC's placeholder)."""
