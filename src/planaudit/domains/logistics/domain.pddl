;; Logistics: packages travel between locations in several cities.
;; Trucks drive between locations of one city; airplanes fly between
;; airports (of any city).  Every action costs 1.

(define (domain logistics)
  (:requirements :strips :typing :action-costs)

  (:types
    city location physobj - object
    package vehicle - physobj
    truck airplane - vehicle
    airport - location)

  (:predicates
    (at ?o - physobj ?l - location)     ; package or vehicle ?o is at ?l
    (in ?p - package ?v - vehicle)      ; package ?p is inside vehicle ?v
    (in-city ?l - location ?c - city))  ; location ?l belongs to city ?c

  (:functions (total-cost) - number)

  (:action load-truck
    :parameters (?p - package ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (at ?p ?l))
    :effect (and (in ?p ?t)
                 (not (at ?p ?l))
                 (increase (total-cost) 1)))

  (:action unload-truck
    :parameters (?p - package ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (in ?p ?t))
    :effect (and (at ?p ?l)
                 (not (in ?p ?t))
                 (increase (total-cost) 1)))

  (:action load-airplane
    :parameters (?p - package ?a - airplane ?l - airport)
    :precondition (and (at ?a ?l) (at ?p ?l))
    :effect (and (in ?p ?a)
                 (not (at ?p ?l))
                 (increase (total-cost) 1)))

  (:action unload-airplane
    :parameters (?p - package ?a - airplane ?l - airport)
    :precondition (and (at ?a ?l) (in ?p ?a))
    :effect (and (at ?p ?l)
                 (not (in ?p ?a))
                 (increase (total-cost) 1)))

  ;; A truck stays inside its city.
  (:action drive-truck
    :parameters (?t - truck ?from - location ?to - location ?c - city)
    :precondition (and (at ?t ?from)
                       (in-city ?from ?c)
                       (in-city ?to ?c))
    :effect (and (at ?t ?to)
                 (not (at ?t ?from))
                 (increase (total-cost) 1)))

  (:action fly-airplane
    :parameters (?a - airplane ?from - airport ?to - airport)
    :precondition (at ?a ?from)
    :effect (and (at ?a ?to)
                 (not (at ?a ?from))
                 (increase (total-cost) 1))))
