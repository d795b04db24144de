"""The official MCP memory server's nine tools, same names and argument shapes, over graphmem.

An agent configured for ``@modelcontextprotocol/server-memory`` switches by changing the command.
Results have the reference's shapes (``{entities}``, ``{relations}``, ``{results}``, ``{success,
message}``, ``{entities, relations}``) plus graphmem's ids, which plain clients ignore.
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime.

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from .memory_graph import MemoryGraph
from .registry import Registry

__all__ = ["register_memory_tools"]


class EntityIn(BaseModel):
    """An entity to create."""

    name: str = Field(description="The name of the entity")
    entityType: str = Field(description="The type of the entity")
    observations: list[str] = Field(description="An array of observation contents associated with the entity")


class Entity(EntityIn):
    """An entity as stored (graphmem adds its id and normalised type)."""

    model_config = ConfigDict(extra="allow")


class RelationIn(BaseModel):
    """A relation, in active voice."""

    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from", description="The name of the entity where the relation starts")
    to: str = Field(description="The name of the entity where the relation ends")
    relationType: str = Field(description="The type of the relation")


class Relation(RelationIn):
    """A relation as stored (graphmem adds its id and normalised type)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ObservationsIn(BaseModel):
    """Observations to add to one entity."""

    entityName: str = Field(description="The name of the entity to add the observations to")
    contents: list[str] = Field(description="An array of observation contents to add")


class DeletionIn(BaseModel):
    """Observations to delete from one entity."""

    entityName: str = Field(description="The name of the entity containing the observations")
    observations: list[str] = Field(description="An array of observations to delete")


class AddedObservations(BaseModel):
    """What add_observations added to one entity."""

    entityName: str
    addedObservations: list[str]


class EntitiesResult(BaseModel):
    """The entities created."""

    entities: list[Entity]


class RelationsResult(BaseModel):
    """The relations created."""

    relations: list[Relation]


class ObservationsResult(BaseModel):
    """The observations added, per entity."""

    results: list[AddedObservations]


class Done(BaseModel):
    """A deletion's acknowledgement."""

    success: bool
    message: str


class KnowledgeGraph(BaseModel):
    """Entities and the relations touching them."""

    model_config = ConfigDict(extra="allow")
    entities: list[Entity]
    relations: list[Relation]


def _relations_in(relations: list[RelationIn]) -> list[dict[str, str]]:
    return [{"from": r.from_, "to": r.to, "relationType": r.relationType} for r in relations]


def register_memory_tools(reg: Registry) -> None:
    """Add the nine tools of the reference memory server to ``reg``'s server."""
    graph = MemoryGraph(reg.kb)

    @reg.tool(title="Create Entities", read_only=False, destructive=False, idempotent=False)
    def create_entities(entities: list[EntityIn]) -> EntitiesResult:
        """Create multiple new entities in the knowledge graph (names that exist are skipped).
        Observations are stored as evidence (provenance "agent", timestamped) that search cites."""
        created = graph.create_entities([e.model_dump() for e in entities])
        return EntitiesResult.model_validate({"entities": created})

    @reg.tool(title="Create Relations", read_only=False, destructive=False, idempotent=False)
    def create_relations(relations: list[RelationIn]) -> RelationsResult:
        """Create multiple new relations between entities in the knowledge graph. Relations should be
        in active voice. Both entities must exist (create them with create_entities first)."""
        return RelationsResult.model_validate({"relations": graph.create_relations(_relations_in(relations))})

    @reg.tool(title="Add Observations", read_only=False, destructive=False, idempotent=False)
    def add_observations(observations: list[ObservationsIn]) -> ObservationsResult:
        """Add new observations to existing entities in the knowledge graph; returns the ones added
        per entity. Fails, writing nothing, if an entity does not exist."""
        added = graph.add_observations([o.model_dump() for o in observations])
        return ObservationsResult.model_validate({"results": added})

    @reg.tool(title="Delete Entities", read_only=False, destructive=True, idempotent=True)
    def delete_entities(
        entityNames: Annotated[list[str], Field(description="An array of entity names to delete")],
    ) -> Done:
        """Delete multiple entities and their associated relations from the knowledge graph."""
        graph.delete_entities(entityNames)
        return Done(success=True, message="Entities deleted successfully")

    @reg.tool(title="Delete Observations", read_only=False, destructive=True, idempotent=True)
    def delete_observations(deletions: list[DeletionIn]) -> Done:
        """Delete specific observations from entities in the knowledge graph (the previous version
        of the entity's observations stays readable as a document version)."""
        graph.delete_observations([d.model_dump() for d in deletions])
        return Done(success=True, message="Observations deleted successfully")

    @reg.tool(title="Delete Relations", read_only=False, destructive=True, idempotent=True)
    def delete_relations(
        relations: Annotated[list[RelationIn], Field(description="An array of relations to delete")],
    ) -> Done:
        """Delete multiple relations from the knowledge graph."""
        graph.delete_relations(_relations_in(relations))
        return Done(success=True, message="Relations deleted successfully")

    @reg.tool(title="Read Graph", read_only=True)
    def read_graph() -> KnowledgeGraph:
        """Read the entire knowledge graph."""
        return KnowledgeGraph.model_validate(graph.read_graph())

    @reg.tool(title="Search Nodes", read_only=True)
    def search_nodes(
        query: Annotated[str, Field(description="The search query to match against entity names, types, and "
                                                "observation content")],
    ) -> KnowledgeGraph:
        """Search for nodes in the knowledge graph based on a query (for ranked passages with
        citations use graphmem's `search`)."""
        return KnowledgeGraph.model_validate(graph.search_nodes(query))

    @reg.tool(title="Open Nodes", read_only=True)
    def open_nodes(
        names: Annotated[list[str], Field(description="An array of entity names to retrieve")],
    ) -> KnowledgeGraph:
        """Open specific nodes in the knowledge graph by their names, with the relations touching them."""
        return KnowledgeGraph.model_validate(graph.open_nodes(names))
